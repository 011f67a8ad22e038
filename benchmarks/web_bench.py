"""Web panel speed: the notes page and search pages rendered at N notes (default 10,000).

Each page is requested through Starlette's TestClient, in process, logged in: the time is the
server's whole work for the request (the gate, the health line's ``Memory.status``, the page's
``Memory`` call, the template) plus the in-process client's small overhead. Beside each page, in
the same run, the bare ``Memory`` call it makes (the baseline: what the panel adds is the rest).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from .common import md_table, percentile
from .vaultgen import generate, queries

TOKEN = "bench-token"
ROUNDS = 30
QUERIES = 24
TARGET_MS = 100.0


def _times(fn: Callable[[], object], rounds: int) -> list[float]:
    fn()  # warm: first render compiles the template, first query warms SQLite's cache
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _row(name: str, page: list[float], bare: list[float], base_name: str) -> list[object]:
    p50, p95 = statistics.median(page), percentile(page, 95)
    return [
        name,
        f"{p50:.1f}",
        f"{p95:.1f}",
        base_name,
        f"{statistics.median(bare):.1f}",
        f"{percentile(bare, 95):.1f}",
        "yes" if p95 < TARGET_MS else "NO",
    ]


def run(n: int = 10_000) -> str:
    from starlette.testclient import TestClient

    from cairn import Memory
    from cairn.web import panel_app

    with tempfile.TemporaryDirectory() as tmp:
        vault, home = Path(tmp) / "vault", Path(tmp) / "home"
        notes = generate(vault, n)
        t0 = time.perf_counter()
        memory = Memory.open(vault, home=home)
        memory.refresh()
        indexed = time.perf_counter() - t0
        try:
            client = TestClient(panel_app(memory, TOKEN), base_url="http://127.0.0.1:8765")
            client.get(f"/?token={TOKEN}")

            def get(url: str) -> Callable[[], object]:
                def fetch() -> object:
                    r = client.get(url)
                    assert r.status_code == 200, (url, r.status_code)
                    return r

                return fetch

            rows = []
            tag = notes and memory.list(limit=1)[0].tags[0]
            rows.append(
                _row(
                    "notes page `/` (200 newest)",
                    _times(get("/"), ROUNDS),
                    _times(lambda: memory.list(limit=200), ROUNDS),
                    "Memory.list(limit=200)",
                )
            )
            rows.append(
                _row(
                    f"notes page `/?tag=…` ({tag})",
                    _times(get(f"/?tag={quote(tag)}"), ROUNDS),
                    _times(lambda: memory.list(tag=tag, limit=200), ROUNDS),
                    "Memory.list(tag=…)",
                )
            )
            page_t: list[float] = []
            bare_t: list[float] = []
            for q in queries(20261130, QUERIES, notes):
                page_t += _times(get(f"/search?q={quote(q)}"), 3)
                bare_t += _times(lambda q=q: memory.search(q), 3)
            rows.append(
                _row(
                    f"search page `/search?q=…` ({QUERIES} queries, zh/en/mixed)",
                    page_t,
                    bare_t,
                    "Memory.search(q)",
                )
            )
            one = notes[n // 2]
            rows.append(
                _row(
                    "one note `/note/…`",
                    _times(get(f"/note/{quote(one.permalink)}"), ROUNDS),
                    _times(lambda: memory.context(f"memory://{one.permalink}"), ROUNDS),
                    "Memory.context(depth=1)",
                )
            )
            status = _times(memory.status, ROUNDS)
            freshness = memory.status()["freshness"]
        finally:
            memory.close()
    header = [
        "page",
        "p50 ms",
        "p95 ms",
        "baseline (same run)",
        "p50 ms",
        "p95 ms",
        f"p95 < {TARGET_MS:.0f} ms",
    ]
    return "\n".join(
        [
            f"## Web panel at {n:,} notes",
            "",
            f"Vault made by benchmarks/vaultgen.py and indexed in {indexed:.1f} s; index freshness by "
            f"`{freshness}`. Each page timed {ROUNDS} times after a warm-up (search: each query 3 times), "
            "in process through Starlette's TestClient, logged in. The health line on every page costs one "
            f"`Memory.status()` (p50 {statistics.median(status):.1f} ms), inside the page times.",
            "",
            md_table(header, rows),
            "",
        ]
    )
