"""Evaluation: tree metrics, retrieval metrics, benchmarks and their reports."""
