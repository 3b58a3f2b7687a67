"""Searching memory: hybrid ranking (BM25 + dense + fusion), date periods, semantic term expansion."""
