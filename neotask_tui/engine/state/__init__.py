"""Structured session state: model and fold, the manager, model-facing tools, the promotion inbox."""
