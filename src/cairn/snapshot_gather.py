"""A snapshot's candidates, gathered from the index: the notes relevant to the query, confirmed
preferences and the scope's sections, with superseded notes replaced and disagreeing claims kept
together; ``cairn.snapshot`` then fits them in the budgets. Imported by ``Memory.snapshot`` only."""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from . import lifecycle, links, snapshot
from .filters import Filters, visible
from .index import Index
from .rows import NoteKey, Row, expires_text
from .search import analysis, candidates
from .search.vocabulary import IndexVocabulary

SNAPSHOT_ITEM_BYTES = 2048  # one long note must not crowd every other note out of a snapshot


def gather(
    index: Index,
    query: str,
    scope_list: tuple[str, ...],
    *,
    top_k: int,
    max_bytes: int,
    max_tokens: int,
    now: float,
) -> snapshot.Snapshot:
    """The snapshot of ``query`` in ``scope_list`` (see ``Memory.snapshot``)."""
    current = Filters(scopes=scope_list, now=now)
    every = Filters(scopes=scope_list, include_sensitive=True, include_expired=True, now=now)
    omitted: dict[str, list[str]] = {"sensitive": [], "expired": [], "superseded": []}
    rows: list[tuple[Row, str]] = []
    terms, stats, _ = analysis.analyse(query, IndexVocabulary(index))

    def admit(found: Sequence[Row], why: str) -> None:
        for row in found:
            if row.sensitivity == "sensitive":
                omitted["sensitive"].append(row.permalink)
            elif not visible(row, current):
                omitted["expired"].append(row.permalink)
            else:
                rows.append((row, why))

    if terms:
        # Sensitive notes are searched to be counted as left out; words on #sensitive
        # lines never count: they would bring in, unnamed, the note that hides them.
        found = candidates.search_notes(index, terms, every, top_k * 3, stats, private_lines=False)
        admit([row for row, _score in found], "query")
    preferences = replace(every, type="preference", where={"confirmed": {"$ne": False}})
    admit(index.keys(preferences), "preference")  # a vault may hold thousands
    sections = [r for r in index.list(replace(every, folder="sections"), None) if r.folder == "sections"]
    admit(sorted(sections, key=_section_order), "section")
    items, beyond = _snapshot_items(index, rows, current, omitted, snapshot.reach(top_k))
    return snapshot.build(
        items,
        top_k=top_k,
        max_bytes=max_bytes,
        max_tokens=max_tokens,
        omitted=omitted,
        beyond=beyond,
    )


def _snapshot_items(
    index: Index,
    rows: Sequence[tuple[Row | NoteKey, str]],
    current: Filters,
    omitted: dict[str, list[str]],
    reach: int,
) -> tuple[list[snapshot.Item], list[str]]:
    """Replace superseded notes by what replaces them and keep disagreeing claims together.

    Returns the first ``reach`` candidates (a disagreement counting once), which are all a
    snapshot may try, and the permalinks of the notes after them, which it can only name.
    """
    chosen: list[tuple[Row, str, str | None]] = []  # (row, why, claim group)
    beyond: list[str] = []
    units = 0
    seen: set[str] = set()
    queue = deque(rows)
    # A note replaced by a sensitive one is still left out (and the replacement not named).
    replaced = links.superseded_by_many(index, [row for row, _ in rows], current.now, include_sensitive=True)
    while queue:
        row, why = queue.popleft()
        if row.permalink in seen:
            continue
        replacers = (
            replaced[row.id]
            if row.id in replaced
            else links.superseded_by(index, row, current.now, include_sensitive=True)
        )
        if replacers:
            omitted["superseded"].append(row.permalink)
            seen.add(row.permalink)
            queue.extendleft(
                reversed(
                    [
                        (r, why)
                        for permalink in replacers
                        for r in index.rows_by_permalink((row.scope,), permalink)
                        if visible(r, current)
                    ]
                )
            )
            continue
        seen.add(row.permalink)
        if units >= reach:
            beyond.append(row.permalink)
            continue
        if isinstance(row, NoteKey) and (row := index.row_by_id(row.id)) is None:
            continue
        units += 1  # the row and its disagreeing mates go in as one
        group = None
        mates: list[Row] = []
        if row.claim_key and (holders := links.disagreeing(index, current, row.claim_key)):
            group = row.claim_key
            mates = [r for r in holders if r.permalink != row.permalink and r.permalink not in seen]
        for member in [row, *mates]:
            seen.add(member.permalink)
            chosen.append((member, why, group))
    return [_snapshot_item(index, row, why, group) for row, why, group in chosen], beyond


def _snapshot_item(index: Index, row: Row, why: str, group: str | None) -> snapshot.Item:

    def body() -> str:  # read only if the snapshot tries this note
        lines = [text for _, text in index.lines_of(row.id) if text.lstrip("# ").strip() != row.title]
        know = lifecycle.knowledge(json.loads(row.frontmatter))
        if know:
            lines += [f"applies when (not verified): {c}" for c in know.applicability]
            lines += [f"failed when: {c}" for c in know.counterexamples]
            if know.claim_key:
                lines.append(f"claim: {know.claim_key} = {know.claim_value}")
        if row.expires_ts is not None:
            lines.append(f"expires: {expires_text(row)}")
        # Counted as it will be shown: escaping can make a line up to six times longer ("{").
        escaped_size = lambda part: len(snapshot.escape(part).encode("utf-8"))  # noqa: E731
        return _clip("\n".join(lines), SNAPSHOT_ITEM_BYTES, row.permalink, escaped_size)

    return snapshot.Item(
        permalink=row.permalink,
        title=row.title,
        scope=row.scope,
        version=row.version,
        origin=row.origin,
        modified=row.modified,
        why=why,
        body=body,
        group=group,
    )


def _section_order(row: Row) -> tuple[float, str]:
    order = json.loads(row.frontmatter).get("order")
    return (float(order) if isinstance(order, int | float) else math.inf, row.title)


def _clip(text: str, limit: int, permalink: str, size: Callable[[str], int]) -> str:
    """At most ``limit`` bytes of ``text`` as ``size`` counts them, in whole lines but for a line
    too long to keep, which is cut at a character; saying where the rest is."""
    if size(text) <= limit:
        return text
    kept: list[str] = []
    room = limit
    for line in text.split("\n"):
        cost = size(line) + 1
        if cost <= room:
            kept.append(line)
            room -= cost
            continue
        if room > 64:  # worth showing the start of a long line rather than nothing of it
            cut: list[str] = []
            room -= size("…") + 1
            for char in line:
                room -= size(char)
                if room < 0:
                    break
                cut.append(char)
            kept.append("".join(cut) + "…")
        break
    return "\n".join([*kept, f"... (more in memory://{permalink})"])
