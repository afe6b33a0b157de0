"""Fakes of what cannot run in tests: the model providers."""
