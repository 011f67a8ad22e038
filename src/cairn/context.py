"""Context: the notes a ``memory://`` URL names and what their relations reach within a few
hops, in both directions (DESIGN section 5)."""

from __future__ import annotations

import re
from collections.abc import Callable

from . import filters, links
from .errors import NotFound
from .filters import Filters
from .index import Index
from .models import Context, ContextNode, Note, Relation
from .rows import Row, summary


def gather(
    index: Index,
    url: str,
    target: str,
    *,
    resolve: Callable[[str], Row],
    load: Callable[[str], Note],
    depth: int,
    bound: float | None,
    visible: Filters,
) -> Context:
    """The context of ``url`` (its permalink part ``target``): a wildcard matches permalinks among
    the notes ``visible`` lets through; a note named exactly is found by ``resolve`` whatever it
    is. ``load`` reads a note's file by path; ``bound``: related notes modified before it are
    left out."""
    if "*" in target:
        pattern = re.sub(r"([\[\]?])", r"[\1]", target)
        primary_rows = index.rows_by_glob(visible, pattern, 50)
        if not primary_rows:
            raise NotFound(f"no note matches {url!r}")
    else:
        primary_rows = [resolve(target)]
    primary = tuple(load(row.path) for row in primary_rows)
    seen = {row.id for row in primary_rows}
    nodes: list[ContextNode] = []
    unresolved: list[Relation] = []
    frontier = primary_rows
    for level in range(1, depth + 1):
        following: list[Row] = []
        for row in frontier:
            for rel_type, rel_target, linked in links.relations_of(
                index, row.id, include_private=visible.include_sensitive
            ):
                if linked is None:
                    if level == 1:
                        unresolved.append(Relation(rel_type, rel_target))
                    continue
                for hop in index.rows_by_permalink((row.scope,), linked)[:1]:
                    if filters.visible(hop, visible):
                        following += _visit(hop, level, rel_type, row, seen, nodes, bound, "out")
            for rel_type, _title, source in links.backlinks_of(index, row, visible):
                for hop in index.rows_by_permalink((row.scope,), source)[:1]:
                    following += _visit(hop, level, rel_type, row, seen, nodes, bound, "in")
        frontier = following
    return Context(url=url, primary=primary, related=tuple(nodes), unresolved=tuple(unresolved))


def _visit(
    row: Row,
    level: int,
    via: str,
    source: Row,
    seen: set[int],
    nodes: list[ContextNode],
    bound: float | None,
    direction: str,
) -> list[Row]:
    if row.id in seen:
        return []
    seen.add(row.id)
    if bound is not None and (row.modified_ts or 0) < bound:
        return []
    nodes.append(ContextNode(summary(row), level, via, source.permalink, direction))
    return [row]
