"""Benchmarks comparing compiled gradients with hand-written NumPy gradients."""
