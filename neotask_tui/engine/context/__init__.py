"""Context assembly: the per-section ledger and the fences around untrusted text."""
