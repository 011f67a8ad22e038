"""One search, from a query's text to its hits: each stage of this package in order, for the
whole query and, for a question that asks several things (``parts``), for each part too."""

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
    also searched part by part: the best hit of each part comes first, in the order asked, then
    the hits of the whole question (each hit once). Ranked whole, the part with more or rarer
    words would fill the first hits; the whole question still ranks the rest, since a part read
    alone loses what the others say ("她" in "王老师教哪门课？另外她暑假去哪儿？"). Each hit's
    score and coverage are those of the search that found it."""
    parts = question_parts(query)
    whole = _search(index, query, filters, limit, granularity)
    if len(parts) == 1:
        return whole
    bests = [found[:1] for found in (_search(index, part, filters, 1, granularity) for part in parts)]
    hits: list[Hit] = []
    seen: set[tuple[str, str, int]] = set()
    for hit in itertools.chain(*bests, whole):
        key = (hit.scope, hit.path, hit.line if granularity == "line" else 0)
        if key not in seen:
            seen.add(key)
            hits.append(hit)
    return hits[:limit]


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
