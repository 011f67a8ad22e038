"""The links between notes as the index holds them: relations and backlinks, what supersedes
what, and the notes that claim values for one key. Read by hits, context and snapshots."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .filters import Filters
from .index import _RESOLVED, Index, _chunks, _marks
from .records import key
from .rows import NOTE_COLUMNS, NoteKey, Row

_FEW_TARGETS = 256  # superseded_by_many: for more rows than this, first read which permalinks are named


class Links(NamedTuple):
    """Relations and backlinks of some notes, by note id, as ``relations_of_many`` and
    ``backlinks_of_many`` give them."""

    relations: dict[int, list[tuple[str, str, str | None]]]
    backlinks: dict[int, list[tuple[str, str, str]]]


def relations_of(index: Index, note_id: int, *, include_private: bool) -> list[tuple[str, str, str | None]]:
    """Outgoing relations: (type, target, resolved permalink or None), in file order; those
    written on #sensitive lines only if ``include_private``."""
    return relations_of_many(index, [note_id], include_private=include_private)[note_id]


def relations_of_many(
    index: Index, note_ids: Sequence[int], *, include_private: bool
) -> dict[int, list[tuple[str, str, str | None]]]:
    """``relations_of`` each note, by id, in one query."""
    out: dict[int, list[tuple[str, str, str | None]]] = {i: [] for i in note_ids}
    if note_ids:
        marks = _marks(note_ids)
        for note_id, *relation in index.db.execute(
            f"SELECT r.note_id, r.type, r.target, {_RESOLVED} FROM relations r JOIN notes n ON n.id = r.note_id"
            f" WHERE r.note_id IN ({marks}) AND (? OR r.private = 0) ORDER BY r.note_id, r.line, r.target",
            [*note_ids, include_private],
        ):
            out[note_id].append(tuple(relation))  # type: ignore[arg-type]
    return out


def backlinks_of(index: Index, row: Row, visible: Filters) -> list[tuple[str, str, str]]:
    """Incoming relations: (type, source title, source permalink), from the notes ``visible``
    (a ``Filters.visibility()``) lets through; links on #sensitive lines only with the
    sensitive notes."""
    return backlinks_of_many(index, [row], visible)[row.id]


def backlinks_of_many(
    index: Index, rows: Sequence[Row], visible: Filters
) -> dict[int, list[tuple[str, str, str]]]:
    """``backlinks_of`` each row, by id, in one query: relations in the row's scope whose
    target is its title or its permalink, from other notes."""
    out: dict[int, list[tuple[str, str, str]]] = {r.id: [] for r in rows}
    wanted: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        for k in dict.fromkeys((key(r.title), key(r.permalink))):
            wanted.setdefault((r.scope, k), []).append(r)
    if not wanted:
        return out
    keys = sorted({k for _, k in wanted})
    where, params = visible.sql()
    for target_key, scope, source_id, rel_type, title, permalink in index.db.execute(
        "SELECT r.target_key, n.scope, n.id, r.type, n.title, n.permalink FROM relations r"
        f" JOIN notes n ON n.id = r.note_id WHERE {where} AND r.target_key IN ({_marks(keys)})"
        " AND (? OR r.private = 0) ORDER BY n.permalink, r.line",
        [*params, *keys, visible.include_sensitive],
    ):
        for r in wanted.get((scope, target_key), ()):
            if r.id != source_id:
                out[r.id].append((rel_type, title, permalink))
    return out


def superseded_by(index: Index, row: Row, now: float, *, include_sensitive: bool) -> tuple[str, ...]:
    """Permalinks of current notes in the same scope that say they replace this one; sensitive
    ones only if ``include_sensitive`` (a permalink is made from its note's title)."""
    return superseded_by_many(index, [row], now, include_sensitive=include_sensitive)[row.id]


def superseded_by_many(
    index: Index, rows: Sequence[Row | NoteKey], now: float, *, include_sensitive: bool
) -> dict[int, tuple[str, ...]]:
    """``superseded_by`` of each row, by id, in one query per 10,000 rows.

    A note never replaces itself, and of two notes that each say they replace the other the
    newer one (then the later permalink) is current: otherwise both would be hidden as old.
    """
    found: dict[tuple[str, str], list[tuple[bool, float, str]]] = {}
    if len(rows) > _FEW_TARGETS:
        # A snapshot asks about every preference (12,500 in the 100k benchmark vault) while
        # few notes are ever superseded: look up only the permalinks something names.
        named = {target for (target,) in index.db.execute("SELECT DISTINCT target FROM supersedes")}
        targets = list(dict.fromkeys(r.permalink for r in rows if r.permalink in named))
    else:
        targets = list(dict.fromkeys(r.permalink for r in rows))
    for chunk in _chunks(targets):
        for target, scope, permalink, modified in index.db.execute(
            "SELECT s.target, r.scope, r.permalink, r.modified_ts FROM supersedes s"
            f" JOIN notes r ON r.id = s.note_id WHERE s.target IN ({_marks(chunk)})"
            " AND r.error IS NULL AND (r.expires_ts IS NULL OR r.expires_ts > ?)"
            " AND (? OR r.sensitivity != 'sensitive') AND r.permalink != s.target"
            " AND NOT EXISTS (SELECT 1 FROM notes t JOIN supersedes back ON back.note_id = t.id"
            " WHERE t.scope = r.scope AND t.permalink = s.target AND back.target = r.permalink"
            " AND t.error IS NULL"
            " AND (coalesce(t.modified_ts, 0), t.permalink) > (coalesce(r.modified_ts, 0), r.permalink))",
            [*chunk, now, include_sensitive],
        ):
            found.setdefault((target, scope), []).append((modified is None, -(modified or 0.0), permalink))
    # Newest replacement first (undated last), then by permalink.
    replaced: dict[int, tuple[str, ...]] = dict.fromkeys((r.id for r in rows), ())
    if found:
        for r in rows:
            if (r.permalink, r.scope) in found:
                replaced[r.id] = tuple(p for *_, p in sorted(found[r.permalink, r.scope]))
    return replaced


def claim_holders(index: Index, filters: Filters, claim_key: str) -> list[Row]:
    """Every visible, current note that claims a value for ``claim_key``."""
    where, params = filters.sql()
    sql = (
        f"SELECT {NOTE_COLUMNS} FROM notes n WHERE {where} AND n.claim_key = ?"
        " ORDER BY n.modified_ts DESC, n.permalink"
    )
    return [Row.from_sql(r) for r in index.db.execute(sql, [*params, claim_key])]


def disagreeing(index: Index, filters: Filters, claim_key: str) -> list[Row]:
    """The current notes claiming a value for ``claim_key``, if they claim more than one value."""
    holders = claim_holders(index, filters, claim_key)
    replaced = superseded_by_many(index, holders, filters.now, include_sensitive=True)
    current = [r for r in holders if not replaced[r.id]]
    return current if len({r.claim_value for r in current}) > 1 else []
