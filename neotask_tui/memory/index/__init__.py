"""Building the memory index: chunking, the embedder, the LanceDB store, the indexer."""
