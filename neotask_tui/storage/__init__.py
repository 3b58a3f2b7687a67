"""Durable storage: atomic writes, append-only transcripts, the sessions index, locks, archives."""
