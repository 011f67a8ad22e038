"""Hits, built last: a ranked note (and line) as the ``Hit`` a caller sees, with its snippet,
its links, what supersedes it and how much of the query it holds."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from .. import links as links_module
from .. import ranking, tokenize
from ..filters import Filters
from ..index import Index
from ..links import Links
from ..models import Claim, Hit, Related
from ..rows import Row, expires_text

RELATED_PER_HIT = 10
SNIPPET_LINE_CHARS = 320  # a pasted log or minified blob is one line: a hit shows this much of each

HitExtras = tuple[tuple[Related, ...], tuple[str, ...], float | None]  # related, superseded_by, coverage


@dataclass(frozen=True)
class Details:
    """What hits show beyond their row, by note id: fetched for many rows at once."""

    lines: dict[int, list[tuple[int, str]]]
    relations: dict[int, list[tuple[str, str, str | None]]]
    backlinks: dict[int, list[tuple[str, str, str]]]
    superseded: dict[int, tuple[str, ...]]


def read_details(
    index: Index,
    rows: Sequence[Row],
    filters: Filters,
    lines: dict[int, list[tuple[int, str]]] | None = None,
    links: Links | None = None,
) -> Details:
    """Lines and links of the rows about to become hits: four queries for all of them, fewer
    when their ``lines`` or ``links`` (of some of them) were already read."""
    rows = list({r.id: r for r in rows}.values())
    ids = [r.id for r in rows]
    links = links or Links({}, {})
    unread = [r for r in rows if r.id not in links.relations]
    return Details(
        lines=lines
        if lines is not None
        else index.lines_of_many(ids, include_sensitive=filters.include_sensitive),
        relations=links.relations
        | links_module.relations_of_many(
            index, [r.id for r in unread], include_private=filters.include_sensitive
        ),
        backlinks=links.backlinks | links_module.backlinks_of_many(index, unread, filters.visibility()),
        superseded=links_module.superseded_by_many(
            index, rows, filters.now, include_sensitive=filters.include_sensitive
        ),
    )


def hit(
    index: Index,
    row: Row,
    score: float,
    filters: Filters,
    *,
    line: int | None = None,
    ranker: ranking.Query | None = None,
    lines: list[tuple[int, str]] | None = None,
    counted: Sequence[ranking.Counted | None] | None = None,
    cache: dict[int, HitExtras] | None = None,
    details: Details | None = None,
) -> Hit:
    """A row as a hit; ``details`` (from ``read_details``) saves the queries for its lines and links,
    and ``counted`` (``ranking.term_counts`` of ``lines``), if the caller has it, counting them."""
    extras = cache.get(row.id) if cache is not None else None
    if details is None and (lines is None or extras is None):
        details = read_details(index, [row], filters)
    if lines is None:
        lines = details.lines[row.id]  # type: ignore[union-attr]
    # Each line tokenized once, for the best line and for coverage.
    if counted is None and ranker is not None and ranker.terms and (line is None or extras is None):
        counted = ranking.term_counts([t for _, t in lines], ranker)
    if line is None:
        line = best_line(lines, ranker, counted)
    numbers = [number for number, _ in lines]
    at = bisect.bisect_left(numbers, line)
    snippet = "\n".join(
        clip_line(text, ranker.probes if ranker else ()) for _, text in lines[max(0, at - 1) : at + 2]
    )
    if extras is None:
        assert details is not None
        related = [Related(t, target, linked) for t, target, linked in details.relations[row.id]]
        related += [Related(t, title, source, "in") for t, title, source in details.backlinks[row.id]]
        covered = None
        if ranker is not None and counted is not None:
            heading = ranking.term_counts([row.title, " ".join(row.tags)], ranker)
            covered = ranking.coverage([*heading, *counted], ranker)
        extras = (
            tuple(related[:RELATED_PER_HIT]),
            details.superseded[row.id],
            covered,
        )
        if cache is not None:
            cache[row.id] = extras
    return Hit(
        permalink=row.permalink,
        title=row.title,
        type=row.type,
        tags=row.tags,
        modified=row.modified,
        path=row.path,
        line=line,
        snippet=snippet,
        score=score,
        scope=row.scope,
        sensitive=row.sensitivity == "sensitive",
        related=extras[0],
        expires=expires_text(row),
        superseded_by=extras[1],
        coverage=extras[2],
        claim=Claim(row.claim_key, row.claim_value, row.permalink, row.path) if row.claim_key else None,
    )


def clip_line(text: str, probes: Sequence[str]) -> str:
    """``text`` cut to ``SNIPPET_LINE_CHARS`` around the first query term it holds (its start if none)."""
    if len(text) <= SNIPPET_LINE_CHARS:
        return text
    # Near enough to the index's folding to find where a term starts, and no longer than ``text``.
    lowered = tokenize.simplified(text.lower())
    found = [at for p in probes if (at := lowered.find(p)) >= 0]
    start = max(0, min(found, default=0) - SNIPPET_LINE_CHARS // 4)
    start = min(start, len(text) - SNIPPET_LINE_CHARS)
    end = start + SNIPPET_LINE_CHARS
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def best_line(
    lines: Sequence[tuple[int, str]],
    ranker: ranking.Query | None,
    counted: Sequence[ranking.Counted | None] | None,
) -> int:
    """The line (a content line before a heading) with the best BM25; the first on a tie."""
    if not lines:
        return 1
    if ranker is None or not ranker.terms:
        return lines[0][0]
    scores = ranking.line_bm25([t for _, t in lines], ranker, counted)
    best, best_key = lines[0][0], (0.0, False)
    for (number, text), score in zip(lines, scores, strict=True):
        key = (score, not ranking.is_heading(text))  # the title is shown anyway
        if score > 0 and key > best_key:
            best, best_key = number, key
    return best
