"""Scoring files too large for memory: streaming in one process, Ray Data across many, and their writers."""
