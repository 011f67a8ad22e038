"""Filters a person types: ``--where`` clauses, a ``--since``/``--until`` window, the ``--depth`` limit.

They are parsed and checked here, before any search runs, so that a mistyped filter is an error
(``InvalidInput``, exit 2) rather than an empty result. The faces call these; ``Memory.search``
may call them as well, since nothing here depends on a face.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from typing import Any

from .errors import InvalidInput

__all__ = ["MAX_CONTEXT_DEPTH", "WHERE_HELP", "check_window", "parse_where", "scalar"]

MAX_CONTEXT_DEPTH = 5
"""Most relation hops ``context`` follows; the CLI help, the MCP schema and Memory.context agree."""

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INT = re.compile(r"[+-]?\d+")
_WHERE = re.compile(
    r"^\s*(?P<field>[^\s=<>!:]+)\s*"
    r"(?:(?::(?P<word>[a-z]+)=)|(?P<sym>>=|<=|!=|==|=|>|<))"
    r"\s*(?P<value>.*?)\s*$",
    re.DOTALL,
)
_SYMBOL_OPS = {"=": None, "==": None, "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte"}
_WORD_OPS = {"eq": None, "ne": "$ne", "gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte", "in": "$in"}
_ORDERED = ("$gt", "$gte", "$lt", "$lte")

WHERE_HELP = (
    "Front-matter filter, repeatable (all must hold): FIELD=VALUE, FIELD!=VALUE, FIELD>N, FIELD>=N, "
    "FIELD<N, FIELD<=N, FIELD:in=A,B,C (one of), or the word forms FIELD:eq= :ne= :gt= :gte= :lt= :lte= "
    "(no shell quoting needed). Numbers become numbers, true/false become booleans; > and < compare "
    "numbers or ISO dates. "
    "Examples: --where status=active --where 'confidence>0.7' --where status:in=active,paused"
)


def scalar(text: str) -> Any:
    """``"3"`` -> 3, ``"0.7"`` -> 0.7, ``"true"`` -> True; anything else stays a string."""
    if _INT.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return text


def _is_date(text: str) -> bool:
    if not re.match(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _bad(clause: str, why: str) -> InvalidInput:
    return InvalidInput(f"--where {clause!r}: {why} (see cairn search --help)")


def parse_where(clauses: list[str] | tuple[str, ...]) -> dict[str, Any] | None:
    """Turn ``--where`` clauses into the ``where`` mapping of :meth:`Memory.search`.

    Raises:
        InvalidInput: bad syntax, a missing value, an ordered comparison with something that is
            neither a number nor a date, or two clauses on one field that cannot both hold.
    """
    if not clauses:
        return None
    where: dict[str, Any] = {}
    for clause in clauses:
        match = _WHERE.match(clause)
        if not match:
            raise _bad(clause, "write FIELD=VALUE, FIELD>N, FIELD:in=A,B ...")
        name, word, sym, raw = match.group("field", "word", "sym", "value")
        if word is not None and word not in _WORD_OPS:
            raise _bad(clause, f"unknown operator ':{word}=' (use one of {', '.join(_WORD_OPS)})")
        op = _WORD_OPS[word] if word is not None else _SYMBOL_OPS[sym]
        shown = f":{word}=" if word is not None else sym
        if sym is not None and raw[:1] in ("<", ">", "=", "!"):
            raise _bad(clause, "doubled operator")
        if raw == "":
            raise _bad(clause, f"a value is missing after {shown!r}")
        value: Any
        if op == "$in":
            value = [scalar(part.strip()) for part in raw.split(",") if part.strip()]
            if not value:
                raise _bad(clause, "':in=' needs at least one value")
        else:
            value = scalar(raw)
        if op in _ORDERED and not (
            (isinstance(value, (int, float)) and not isinstance(value, bool)) or _is_date(str(value))
        ):
            raise _bad(clause, f"{shown!r} compares numbers or dates (2026-11-01); {raw!r} is neither")

        if name not in where:
            where[name] = value if op is None else {op: value}
            continue
        existing = where[name]
        if op is None or not isinstance(existing, dict):
            # Plain equality cannot share a field with another condition in the where mapping.
            if op is None and existing == value:
                continue
            raise _bad(
                clause,
                f"conflicts with an earlier --where on {name!r}: equality cannot be combined "
                "with another condition on the same field",
            )
        if op in existing and existing[op] != value:
            raise _bad(clause, f"{name!r} already has a {shown!r} condition")
        existing[op] = value
    return where


def check_window(since: str | None, until: str | None, tz: tzinfo) -> None:
    """Refuse a ``--since``/``--until`` pair that no time can satisfy, or a bound that is no time.

    Raises:
        InvalidInput: a bound that cannot be read, or ``since`` later than ``until``.
    """
    from .vault import parse_moment

    start = parse_moment(since, tz) if since else None
    end = parse_moment(until, tz, end_of_day=True) if until else None
    if start is not None and end is not None and start > end:
        raise InvalidInput(
            f"--since {since} is after --until {until}: no note can match; swap them or widen the window"
        )
