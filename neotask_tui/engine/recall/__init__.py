"""Recall into the context: long-term memory (consented), and the session's own compacted-away turns."""
