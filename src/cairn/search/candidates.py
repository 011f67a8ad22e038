"""Candidates: the notes holding a query's terms, found and scored by the index (FTS5 BM25,
field-weighted), best first, in one step per query."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import tokenize
from ..filters import Filters
from ..index import Index, _marks
from ..rows import NOTE_COLUMNS, N, Row
from .analysis import TermStats, prefix_terms
from .vocabulary import IndexVocabulary

# Title > permalink > tags > body = private (DESIGN section 4): a word in a note's name says more
# of what the note is about. (benchmarks/results/ablations.md, row "equal field weights (title =
# permalink = tags = body)")
FIELD_WEIGHTS = (4.0, 3.0, 2.0, 1.0, 1.0)
_WEIGHTS = ", ".join(str(w) for w in FIELD_WEIGHTS)
# Sensitive observations live in their own column, searched only when sensitive notes are asked for.
_PUBLIC_COLUMNS = "{title permalink tags body}"
# From this many matches on, the notes are ranked in two halves at once, on two connections and
# two cores (FTS5 releases the GIL while it scores); below it, the second thread and counting each
# term's notes twice cost more than half the work saves.
SPLIT_AFTER = 1500
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class Seen(NamedTuple):
    """A note that ranking saw (``search_notes``): its score, and what ordering it and finding it
    by permalink need, so that its links can be weighed without reading it again."""

    score: float
    scope: str
    permalink: str
    modified_ts: float | None
    path: str


def search_notes(
    index: Index,
    terms: Sequence[str],
    filters: Filters,
    limit: int,
    stats: TermStats | None = None,
    seen: dict[int, Seen] | None = None,
    *,
    private_lines: bool | None = None,
) -> list[tuple[Row, float]]:
    """The ``limit`` best notes holding any of ``terms`` (from ``search_terms``): BM25
    (field-weighted), then newest, then permalink and path.

    A term in half the notes or more has no weight in BM25 (FTS5 gives it an IDF of 1e-6),
    yet FTS5 would score every note that holds it. So it is left out of the query while
    other terms find ``limit`` notes: the notes holding only such terms would all come
    after those anyway. ``stats``: ``term_stats(terms)``, if the caller has it. ``seen``, if
    given, receives every note ranked on the way (the hits and a few after them), by id.
    ``private_lines``: whether words on #sensitive lines count; by default they do exactly
    when ``filters`` lets sensitive notes through.
    """
    if not terms:
        return []
    private = filters.include_sensitive if private_lines is None else private_lines
    stats = stats or IndexVocabulary(index).term_stats(terms)
    # In the columns searched; by default a floor for them (notes holding a term outside
    # "private"). A term's own count is a floor for its prefix query's (``data*``: ``database``).
    held = stats.docs if private else stats.public

    def searched(some: Sequence[str]) -> str:
        match = match_expression(some) or ""
        return match if private else f"{_PUBLIC_COLUMNS} : ({match})"

    weighted = [t for t in terms if 2 * held.get(t, 0) < stats.notes]
    if weighted and len(weighted) < len(terms):
        matches = max(held.get(t, 0) for t in weighted)
        ranked = _ranked(index, searched(weighted), filters, limit, matches, seen)
        if len(ranked) >= limit:
            return ranked
        if seen is not None:
            seen.clear()
    return _ranked(index, searched(terms), filters, limit, max(held.get(t, 0) for t in terms), seen)


def _ranked(
    index: Index, match: str, filters: Filters, limit: int, matches: int, seen: dict[int, Seen] | None = None
) -> list[tuple[Row, float]]:
    """``matches``: a floor for how many notes ``match`` finds (the most any one term is in)."""
    if filters.selective:
        found = _search_notes_filtered(index, match, filters, limit)
        if seen is not None:
            seen.update(
                (r.id, Seen(score, r.scope, r.permalink, r.modified_ts, r.path)) for r, score in found
            )
        return found
    # Few notes fail the default filters, so rank in FTS5 alone and widen the window only
    # when the cut could hide a note that ranks (or ties) inside the limit.
    window = max(4 * limit, 64)
    where, params = filters.sql()
    while True:
        ranked = _best_scores(index, match, window + 1, split=matches >= SPLIT_AFTER and _CORES > 1)
        scores = dict(ranked)
        marks = _marks(scores)
        # Sort on the few columns the order needs; read whole rows only for those kept.
        # (id, scope, permalink, modified_ts, path), as ``keys_by_permalinks`` gives them.
        keys = index.db.execute(
            f"SELECT n.id, n.scope, n.permalink, n.modified_ts, n.path FROM notes n WHERE n.id IN ({marks}) AND {where}",
            [*scores, *params],
        ).fetchall()
        keys.sort(key=lambda k: rank_order(-scores[k[0]], k[3], k[2], k[4]))
        exhausted = len(ranked) <= window
        if exhausted or (len(keys) >= limit and scores[keys[limit - 1][0]] < ranked[-1][1]):
            kept = [k[0] for k in keys[:limit]]
            rows = index.rows_by_ids(kept)
            if seen is not None:
                seen.update((k[0], Seen(-scores[k[0]], *k[1:])) for k in keys)
            # A note another process removed between these reads is left out, not an error.
            return [(rows[i], -scores[i]) for i in kept if i in rows]
        window *= 4


def _best_scores(index: Index, match: str, count: int, *, split: bool) -> list[tuple[int, float]]:
    """The ``count`` best (note id, BM25) for ``match``, best (lowest) first; ties in no set order.

    With ``split``, the notes below the middle id are ranked here while a second connection
    ranks the rest in a thread. FTS5 computes each term's weight over the whole table either
    way, so both halves score a note exactly as one query would.
    """
    sql = f"SELECT rowid, bm25(notes_fts, {_WEIGHTS}) AS score FROM notes_fts WHERE notes_fts MATCH ?"
    if split:
        low, high = index.db.execute(
            "SELECT (SELECT min(id) FROM notes), (SELECT max(id) FROM notes)"
        ).fetchone()
        split = low is not None and high > low
    if not split:
        return index.db.execute(f"{sql} ORDER BY score LIMIT ?", (match, count)).fetchall()
    middle = (low + high) // 2 + 1
    second = index.second_connection()
    upper: list[tuple[int, float]] = []
    failed: list[BaseException] = []  # raised here, in the caller's thread

    def rank_upper() -> None:
        try:
            upper.extend(
                second.execute(
                    f"{sql} AND rowid >= ? ORDER BY score LIMIT ?", (match, middle, count)
                ).fetchall()
            )
        except BaseException as exc:
            failed.append(exc)

    # A thread for this query alone, not a pool: a process with a thread left running is
    # never forked to read files (``records.read_records``).
    helper = threading.Thread(target=rank_upper, name="cairn-rank", daemon=True)
    helper.start()
    try:
        lower = index.db.execute(
            f"{sql} AND rowid < ? ORDER BY score LIMIT ?", (match, middle, count)
        ).fetchall()
    finally:
        helper.join()
    if failed:
        raise failed[0]
    return sorted(lower + upper, key=lambda pair: pair[1])[:count]


def _search_notes_filtered(index: Index, match: str, filters: Filters, limit: int) -> list[tuple[Row, float]]:
    where, params = filters.sql()
    sql = (
        f"WITH m AS (SELECT rowid AS id, bm25(notes_fts, {_WEIGHTS}) AS score FROM notes_fts WHERE notes_fts MATCH ?)"
        f" SELECT {NOTE_COLUMNS}, m.score FROM m JOIN notes n ON n.id = m.id WHERE {where}"
        " ORDER BY m.score, n.modified_ts DESC, n.permalink, n.path LIMIT ?"
    )
    rows = index.db.execute(sql, [match, *params, limit]).fetchall()
    return [(Row.from_sql(r), -r[N]) for r in rows]


def match_expression(terms: Sequence[str]) -> str | None:
    """FTS5 MATCH text for ``analysis.search_terms``: every term quoted, OR-ed; longer words also
    match as prefixes, and a stem ending in ``i`` also as its adjective's stem
    (``tokenize.stem_without_i``)."""
    if not terms:
        return None
    prefixes = prefix_terms(terms)
    parts = []
    for term in terms:
        quoted = '"' + term.replace('"', '""') + '"'
        parts.append(quoted + "*" if term in prefixes else quoted)
        if shorter := tokenize.stem_without_i(term):
            parts.append(f'"{shorter}"')
    return " OR ".join(parts)


def rank_order(score: float, modified_ts: float | None, permalink: str, path: str) -> tuple[Any, ...]:
    """Sort key of a ranked note (``score``: higher is better): score, then newest, then
    permalink and path, so that the same vault and query always give one order."""
    return (-score, -(modified_ts or 0.0), permalink, path)
