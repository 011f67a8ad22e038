"""Benchmarks for Cairn: LoCoMo retrieval, Chinese and English memory sets, and vault scale.

Run everything with ``python -m benchmarks`` (see ``__main__.py``).
"""
