"""One search, from a query's text to its hits: each stage of this package in order, once per
part of a question that asks several things (``parts``), their hits then taken in turn."""

from __future__ import annotations

import itertools

from .. import ranking
from ..filters import Filters
from ..index import Index
from ..models import Hit
from . import analysis, candidates, current, hits, lines, linked
from .analysis import prefix_terms
from .candidates import Seen
from .parts import question_parts
from .vocabulary import IndexVocabulary


def search(index: Index, query: str, filters: Filters, limit: int, granularity: str) -> list[Hit]:
    """The hits of ``query``, best first. A question that asks several things (``parts``) is
    searched part by part, and the hits taken from each in turn (a hit found by two parts, once):
    the best evidence of every part comes near the top, whichever part has more words. Each hit's
    score and coverage are those of the part that found it."""
    parts = question_parts(query)
    if len(parts) == 1:
        return _search(index, query, filters, limit, granularity)
    found: list[Hit] = []
    seen: set[tuple[str, str, int]] = set()
    per_part = [_search(index, part, filters, limit, granularity) for part in parts]
    for hit in itertools.chain.from_iterable(itertools.zip_longest(*per_part)):
        key = (hit.scope, hit.path, hit.line if granularity == "line" else 0) if hit else None
        if key and key not in seen:
            seen.add(key)
            found.append(hit)
    return found[:limit]


def _search(index: Index, query: str, filters: Filters, limit: int, granularity: str) -> list[Hit]:
    terms, stats, stands_for = analysis.analyse(query, IndexVocabulary(index))
    if query.strip() and not terms:
        return []  # only punctuation or symbols: nothing a keyword can match
    ranker = ranking.Query.build(terms, stats.notes, stats.docs, prefix_terms(terms), stands_for)
    if granularity == "line" and terms:
        return lines.line_hits(index, terms, stats, ranker, filters, limit)
    links = None
    if not terms:
        ranked = [(row, 0.0) for row in index.list(filters, limit)]
    else:
        seen: dict[int, Seen] = {}
        pool = max(limit, linked.RANKED_AT_LEAST)
        ranked = candidates.search_notes(index, terms, filters, pool, stats, seen)
        ranked, links = linked.with_linked(index, ranked, seen, filters, pool, ranker)
        ranked = ranked[:limit]
    details = hits.read_details(index, [row for row, _ in ranked], filters, links=links)
    found = [hits.hit(index, row, score, filters, ranker=ranker, details=details) for row, score in ranked]
    return current.current_first(index, found, filters, ranker)[:limit]
