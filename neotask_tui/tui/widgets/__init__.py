"""Widgets of the main screen."""
