"""Link expansion: a note linked to or from a hit gains a share of the hit's score, so the note a
question reaches through a link may rank though it holds none of the query's words."""

from __future__ import annotations

import math
from typing import Any

from .. import links as links_module
from .. import ranking
from ..filters import Filters
from ..index import Index
from ..links import Links
from ..rows import Row
from .candidates import Seen, rank_order

# The share of a hit's score that a note linked to or from it gains: "who found the coupon bug"
# reaches the colleague the incident note names. A link whose type holds query words passes on
# more (see ``with_linked``). (benchmarks/results/ablations.md, row "no link share (relation
# expansion: a linked note gains only where the query names the link's type)")
LINK_SHARE = 0.3
# Links pass scores between the notes ranked, so a short list would rank on fewer links than a
# long one: with a limit of 3, a note that gains from the 5th hit could lose its place to one that
# only the cut spared. Search ranks at least this many notes before the cut, so that any limit up
# to it (the MCP tool's 8, the CLI's 10) shows the first hits of the same order.
RANKED_AT_LEAST = 10


def with_linked(
    index: Index,
    ranked: list[tuple[Row, float]],
    seen: dict[int, Seen],
    filters: Filters,
    limit: int,
    ranker: ranking.Query,
) -> tuple[list[tuple[Row, float]], Links]:
    """``ranked`` (``candidates.search_notes``, best first) once each note linked to or from a hit
    has gained ``LINK_SHARE`` of the best such hit's score, more for a link whose type the query
    names: the share of the query's weight the type holds adds that much of the rest
    (1 - ``LINK_SHARE``). A linked note ranked lower, or not at all, may come in.
    ``seen``: the notes search_notes saw (a linked note outside them scores its gain alone:
    its own score is below the last of them). Also the links read."""
    links = Links(
        links_module.relations_of_many(
            index, [r.id for r, _ in ranked], include_private=filters.include_sensitive
        ),
        links_module.backlinks_of_many(index, [r for r, _ in ranked], filters.visibility()),
    )
    # Relation type -> the share of the query's weight it holds. The types are counted in one
    # call: each call folds and scans its texts once, whatever their number.
    types = list(
        dict.fromkeys(
            relation_type
            for by_note in (links.relations, links.backlinks)
            for note_links in by_note.values()
            for relation_type, *_ in note_links
        )
    )
    named = {
        t: ranking.coverage([counts], ranker)
        for t, counts in zip(types, ranking.term_counts(types, ranker), strict=True)
    }

    def share(relation_type: str) -> float:
        return LINK_SHARE + (1 - LINK_SHARE) * named[relation_type]

    gained: dict[tuple[str, str], float] = {}  # (scope, permalink) -> its best share
    for row, score in ranked:
        if score <= 0:
            continue
        linked = [(t, p) for t, _, p in links.relations[row.id] if p]
        linked += [(t, p) for t, _, p in links.backlinks[row.id]]
        for relation_type, permalink in linked:
            if permalink != row.permalink:
                at = (row.scope, permalink)
                gained[at] = max(gained.get(at, 0.0), share(relation_type) * score)
    if not gained:
        return ranked, links
    # Ranked on keys alone; whole rows are read only for the linked notes that make the cut.
    scored: dict[int, tuple[float, Row | None, tuple[Any, ...]]] = {}
    for row, score in ranked:
        score += gained.get((row.scope, row.permalink), 0.0)
        scored[row.id] = (score, row, rank_order(score, row.modified_ts, row.permalink, row.path))
    shown = {(row.scope, row.permalink) for row, _ in ranked}
    # A linked note outside those seen scores its gain alone; where that cannot reach the
    # score a note must beat to be shown, only the notes seen can come in, and they are known.
    scores = sorted((score for score, _, _ in scored.values()), reverse=True)
    bar = scores[limit - 1] if len(scores) >= limit else -math.inf
    seen_at: dict[tuple[str, str], list[tuple[int, str, str, float | None, str]]] = {}
    for note_id, note in seen.items():
        seen_at.setdefault((note.scope, note.permalink), []).append((note_id, *note[1:]))
    linked: list[tuple[int, str, str, float | None, str]] = []  # id, scope, permalink, modified, path
    wanted: set[str] = set()
    for at, gain in gained.items():
        if at in shown:
            continue
        if gain >= bar:
            wanted.add(at[1])
        else:
            linked += seen_at.get(at, ())
    linked += index.keys_by_permalinks(filters, sorted(wanted))
    for note_id, scope, permalink, modified, path in linked:
        if (scope, permalink) in gained and (scope, permalink) not in shown:
            score = (seen[note_id].score if note_id in seen else 0.0) + gained[(scope, permalink)]
            scored[note_id] = (score, None, rank_order(score, modified, permalink, path))
    best = sorted(scored.items(), key=lambda item: item[1][2])[:limit]
    unread = [note_id for note_id, (_, row, _) in best if row is None]
    read = index.rows_by_ids(unread) if unread else {}
    # A note another process removed meanwhile is left out, as in search_notes.
    return [
        (row if row is not None else read[note_id], score)
        for note_id, (score, row, _) in best
        if row is not None or note_id in read
    ], links
