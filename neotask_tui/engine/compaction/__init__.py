"""Compaction: the compactor, its inputs, the summary shape, the quality guard and the extractive summarizer."""
