"""Screens and modals (each with a ``.tcss`` beside it)."""
