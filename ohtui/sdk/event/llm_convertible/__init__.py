"""Events the model sees."""
