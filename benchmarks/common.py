"""Shared helpers: paths, the baseline tokenizer, metrics, Markdown tables and a fixed clock."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


WRITTEN_FROM = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)  # when benchmark vaults are written


@contextlib.contextmanager
def a_minute_apart() -> Iterator[None]:
    """Within it, each note Cairn writes is ``modified`` a minute after the one before, from
    ``WRITTEN_FROM``. Ties in score fall to the newest note; on the wall clock, notes written
    within one second tie on that too and fall by permalink instead, and which notes share a
    second changes from run to run (the first Chinese set's MRR read 0.899 or 0.907)."""
    from cairn import writes

    minutes = itertools.count()

    def written_at(tz: tzinfo) -> str:
        return (WRITTEN_FROM + timedelta(minutes=next(minutes))).astimezone(tz).isoformat()

    with mock.patch.object(writes, "now_iso", written_at):
        yield


class MissingData(Exception):
    """A benchmark's input is not on this machine: the section says so, in place of a traceback."""


def locomo_path() -> Path:
    """``$CAIRN_LOCOMO`` or ``../shared/data/locomo10.json`` next to the repository."""
    env = os.environ.get("CAIRN_LOCOMO")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "locomo10.json"
    if not path.is_file():
        raise MissingData(
            f"LoCoMo's data is not at {path}. Put locomo10.json (from the LoCoMo release) there, "
            "or set CAIRN_LOCOMO to its path."
        )
    return path


# A short, ordinary English stopword list (function words only).
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t d ll m re ve
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased ``\\w+`` runs minus stopwords: the tokens both keyword baselines use."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


# (part, granularity, figure, Cairn, plain bigram BM25) of every part run so far: the report's
# closing summary (``plain_summary``) says where Cairn falls below the plain baseline.
PLAIN_BAR: list[tuple[str, str, str, float, float]] = []


def plain_bar(part: str, granularity: str, figure: str, cairn: float, plain: float) -> None:
    PLAIN_BAR.append((part, granularity, figure, cairn, plain))


def plain_summary() -> str:
    """Every figure beside plain bigram BM25 from the same run, and the ones below it."""
    if not PLAIN_BAR:
        return ""
    rows = [
        [part, gran, fig, cairn, plain, f"{cairn - plain:+.3f}"]
        for part, gran, fig, cairn, plain in PLAIN_BAR
    ]
    below = [
        f"{part} ({gran}, {fig} {cairn:.3f} < {plain:.3f})"
        for part, gran, fig, cairn, plain in PLAIN_BAR
        if cairn < plain
    ]
    return "\n".join(
        [
            "## Cairn beside plain bigram BM25",
            "",
            "Each part's headline figure for Cairn and for FTS5 bm25() over the same notes or lines split into CJK "
            "character bigrams and words (no stemming, no stop words), from this run.",
            "",
            md_table(["part", "granularity", "figure", "Cairn", "plain bigram BM25", "difference"], rows),
            "",
            "Below the plain baseline: " + ("; ".join(below) if below else "none") + ".",
            "",
        ]
    )


def recall_at(retrieved: Sequence[Iterable[str]], gold: set[str], k: int) -> float:
    """Share of ``gold`` ids that the first ``k`` results point to (a result may point to several)."""
    if not gold:
        raise ValueError("recall of an empty gold set")
    seen: set[str] = set()
    for ids in retrieved[:k]:
        seen.update(ids)
    return len(seen & gold) / len(gold)


def reciprocal_rank(retrieved: Sequence[str], gold: set[str]) -> float:
    for rank, item in enumerate(retrieved, 1):
        if item in gold:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    idx = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[idx]


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    def cell(v: object) -> str:
        if isinstance(v, float):
            return "n/a" if v != v else f"{v:.3f}"
        return str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def ratio(value: float, base: float) -> str:
    """``value / base`` as ``1.23x`` (``n/a`` when the base is zero or missing)."""
    if not base or base != base or value != value:
        return "n/a"
    return f"{value / base:.2f}x"
