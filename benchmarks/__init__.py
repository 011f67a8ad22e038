"""Benchmarks for Cairn: LoCoMo retrieval, a Chinese memory set, and vault scale.

Run everything with ``python -m benchmarks`` (see ``__main__.py``).
"""
