"""Structural filters of a search or a list (DESIGN section 4, step 1), as SQL over ``notes n``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import InvalidInput
from .records import key
from .rows import NoteKey, Row


@dataclass(frozen=True)
class Filters:
    """Structural filters of a search or list (DESIGN section 4, step 1)."""

    scopes: tuple[str, ...]
    tags: tuple[str, ...] = ()
    type: str | None = None
    folder: str | None = None
    since: float | None = None
    until: float | None = None
    created_since: float | None = None
    created_until: float | None = None
    where: dict[str, Any] | None = None
    include_sensitive: bool = False
    include_expired: bool = False
    now: float = 0.0

    def visibility(self) -> Filters:
        """These scopes, and what is shown of sensitive and expired notes, without the rest (tags,
        type, ...): which notes a caller may see named beside a hit, as a link or a replacement."""
        return Filters(
            self.scopes,
            include_sensitive=self.include_sensitive,
            include_expired=self.include_expired,
            now=self.now,
        )

    @property
    def selective(self) -> bool:
        """True when the filters may leave out many notes (not just sensitive or expired ones)."""
        bounds = (self.since, self.until, self.created_since, self.created_until)
        return bool(self.tags or self.type or self.folder or self.where) or any(b is not None for b in bounds)

    def sql(self) -> tuple[str, list[Any]]:
        # "+n.scope": a vault has a handful of scopes, so the scope must never be the index a
        # query is driven by (SQLite would otherwise scan a whole scope to check 60 note ids).
        clauses = ["n.error IS NULL", f"+n.scope IN ({','.join('?' * len(self.scopes))})"]
        params: list[Any] = list(self.scopes)
        if not self.include_sensitive:
            clauses.append("n.sensitivity != 'sensitive'")
        if not self.include_expired:
            clauses.append("(n.expires_ts IS NULL OR n.expires_ts > ?)")
            params.append(self.now)
        for tag in self.tags:
            clauses.append("n.id IN (SELECT note_id FROM note_tags WHERE tag = ?)")
            params.append(key(tag))
        if self.type:
            clauses.append("n.type = ?")
            params.append(self.type)
        if self.folder:
            # The folder or below: a range of the index ("/" sorts right before "0").
            clauses.append("(n.folder = ? OR (n.folder >= ? AND n.folder < ?))")
            params += [self.folder, self.folder + "/", self.folder + "0"]
        for column, bound, op in (
            ("modified_ts", self.since, ">="),
            ("modified_ts", self.until, "<="),
            ("created_ts", self.created_since, ">="),
            ("created_ts", self.created_until, "<="),
        ):
            if bound is not None:
                clauses.append(f"n.{column} {op} ?")
                params.append(bound)
        for name, condition in (self.where or {}).items():
            sql, values = _field_condition(name, condition)
            clauses.append(sql)
            params += values
        return " AND ".join(clauses), params


_OPERATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _field_condition(name: str, condition: Any) -> tuple[str, list[Any]]:
    """SQL for one front-matter filter. A list field matches when any of its items does; null
    (a blank value) and a missing field both count as null, which no comparison matches."""
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise InvalidInput(f"front-matter field name {name!r} may hold only letters, digits, '_' and '-'")
    # json_each over a scalar yields that scalar, over a list its items, over a missing field nothing.
    items = f"json_each(n.frontmatter, '$.\"{name}\"')"
    if not isinstance(condition, dict):
        return _equal(items, _scalar(name, condition))
    parts: list[str] = []
    params: list[Any] = []
    for op, value in condition.items():
        if op in _OPERATORS:
            bound = _scalar(name, value)
            if bound is None:
                raise InvalidInput(f"filter {name}: {op} needs a number or a string, not null")
            # Numbers compare with numbers and text with text: SQLite would rank any text above
            # any number, so "high" would pass {"$gt": 0.7}.
            kinds = "'text'" if isinstance(bound, str) else "'integer', 'real', 'true', 'false'"
            parts.append(
                f"EXISTS (SELECT 1 FROM {items} WHERE type IN ({kinds}) AND value {_OPERATORS[op]} ?)"
            )
            params.append(bound)
        elif op == "$ne":
            sql, values = _equal(items, _scalar(name, value))
            parts.append(f"NOT {sql}")
            params += values
        elif op == "$in":
            if not isinstance(value, list | tuple) or not value:
                raise InvalidInput(f"filter {name}: $in needs a non-empty list")
            wanted = [_scalar(name, v) for v in value]
            alternatives = [_equal(items, v) for v in dict.fromkeys(wanted)]
            parts.append("(" + " OR ".join(sql for sql, _ in alternatives) + ")")
            params += [v for _, values in alternatives for v in values]
        else:
            raise InvalidInput(f"filter {name}: unknown operator {op!r}; use $gt $gte $lt $lte $in $ne")
    if not parts:
        raise InvalidInput(f"filter {name}: empty condition")
    return "(" + " AND ".join(parts) + ")", params


def _equal(items: str, value: Any) -> tuple[str, list[Any]]:
    if value is None:  # blank, null or not there at all
        return f"NOT EXISTS (SELECT 1 FROM {items} WHERE value IS NOT NULL)", []
    return f"EXISTS (SELECT 1 FROM {items} WHERE value = ?)", [value]


def _scalar(name: str, value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0  # JSON true/false come back from json_extract as 1/0
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return float(value)  # SQLite holds 64-bit integers; JSON numbers beyond that are reals
    if value is None or isinstance(value, int | float | str):
        return value
    raise InvalidInput(f"filter {name}: compare with a string, number or boolean, not {type(value).__name__}")


def visible(row: Row | NoteKey, filters: Filters) -> bool:
    """Whether ``filters`` show ``row`` as far as sensitivity and expiry go (the rest is SQL's)."""
    if row.sensitivity == "sensitive" and not filters.include_sensitive:
        return False
    return filters.include_expired or row.expires_ts is None or row.expires_ts > filters.now
