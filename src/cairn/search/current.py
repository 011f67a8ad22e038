"""Current first: each replacement before what it supersedes, and notes that claim different
values for one key together, so that no superseded note is shown alone as if it were current."""

from __future__ import annotations

from dataclasses import replace

from .. import links as links_module
from .. import ranking
from ..filters import Filters
from ..filters import visible as visible_to
from ..index import Index
from ..models import Claim, Hit
from . import hits


def current_first(index: Index, ranked: list[Hit], filters: Filters, ranker: ranking.Query) -> list[Hit]:
    """Put each replacement before what it supersedes, and bring disagreeing claims together.

    A superseded note is never shown alone as if current; two current notes that claim
    different values for one key are both shown, each naming the other, instead of one
    silently winning.
    """
    visible = filters.visibility()
    ordered = list(ranked)
    for hit in ranked:
        if (
            hit.claim
            and not hit.superseded_by
            and (holders := links_module.disagreeing(index, visible, hit.claim.key))
        ):
            claims = tuple(Claim(r.claim_key or "", r.claim_value, r.permalink, r.path) for r in holders)
            at = ordered.index(hit)
            ordered[at] = replace(hit, disagreement=tuple(c for c in claims if c.permalink != hit.permalink))
            present = {h.permalink for h in ordered}
            missing = [r for r in holders if r.permalink not in present]
            details = hits.read_details(index, missing, visible)
            extra = [hits.hit(index, r, 0.0, visible, ranker=ranker, details=details) for r in missing]
            ordered[at + 1 : at + 1] = [
                replace(e, disagreement=tuple(c for c in claims if c.permalink != e.permalink)) for e in extra
            ]
    for hit in [h for h in ordered if h.superseded_by]:
        replacer = hit.superseded_by[0]
        positions = {h.permalink: i for i, h in enumerate(ordered)}
        ordered.remove(hit)
        if replacer in positions:
            at = next(i for i, h in enumerate(ordered) if h.permalink == replacer)
        else:
            rows = [r for r in index.rows_by_permalink((hit.scope,), replacer) if visible_to(r, visible)]
            if not rows:
                ordered.insert(positions[hit.permalink], hit)
                continue
            at = positions[hit.permalink]
            ordered.insert(at, hits.hit(index, rows[0], hit.score, visible, ranker=ranker))
        ordered.insert(at + 1, hit)
    return ordered
