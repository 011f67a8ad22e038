"""A fixed piece of CPU work, timed at the start and end of a run, to compare runs by.

The VMs these benchmarks run on change speed through a day (the same code's 10k search p50 read
4.9 ms in one run and 11.5 ms in another). Every figure in a report has its baseline from the
same run beside it, but the targets are absolute; the yardstick says how fast the machine was
while a report was made, so two reports can be set side by side. The work mixes what Cairn's
hot paths spend their time on: Python string handling and SQLite FTS5 queries (the standard
library's SQLite, so the figure does not move with Cairn's own choices).
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import time
from collections import Counter

from .common import tokenize

_DOCS = 1_500
_QUERIES = 300
_SEED = 7
_REPEATS = 5


def _corpus() -> tuple[list[str], list[str]]:
    rng = random.Random(_SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(4_000)]
    weights = [1 / (rank + 1) for rank in range(len(vocab))]  # Zipf-like, as words are
    docs = [" ".join(rng.choices(vocab, weights, k=rng.randint(20, 80))) for _ in range(_DOCS)]
    queries = [" OR ".join(f'"{w}"' for w in rng.choices(vocab, weights, k=3)) for _ in range(_QUERIES)]
    return docs, queries


def _work(docs: list[str], queries: list[str]) -> None:
    counts: Counter[str] = Counter()
    for doc in docs:
        counts.update(tokenize(doc))
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.executemany("INSERT INTO t(body) VALUES (?)", ((d,) for d in docs))
    for q in queries:
        db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (q,)).fetchall()
    db.close()


def measure() -> float:
    """Seconds for the fixed work, best of ``_REPEATS`` (the best is the machine, the rest noise)."""
    docs, queries = _corpus()
    times = []
    for _ in range(_REPEATS):
        t0 = time.perf_counter()
        _work(docs, queries)
        times.append(time.perf_counter() - t0)
    return min(times)


def describe(start_s: float, end_s: float) -> str:
    spread = abs(end_s - start_s) / statistics.mean([start_s, end_s])
    return (
        f"Machine yardstick (fixed Python and SQLite FTS5 work, best of {_REPEATS}): {start_s * 1e3:.0f} ms at "
        f"the start of the run, {end_s * 1e3:.0f} ms at the end ({spread:.0%} apart). The targets are "
        "absolute times; on a slower machine every Cairn time and its baseline grow together, so set "
        "reports side by side through this figure and the ratios."
    )
