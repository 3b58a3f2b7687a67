"""Neotask: a terminal chat app whose local engine remembers the right things."""

__version__ = "0.1.0"
