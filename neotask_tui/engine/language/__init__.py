"""What an explicit statement means (English and Russian, no model): the classifier and the constraint rules."""
