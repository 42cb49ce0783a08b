"""Stored reviews and the cache's administration."""
