"""Three-way merge of a note's text for sync: only the case where nothing can be lost is merged.

``merge(base, ours, theirs)`` gives the merged text when both sides only *added* lines to the
base (the usual case: two devices appending observations or relations to one note), else None
and the caller keeps ours and saves theirs as a conflict copy (seed 000 section 5.2).

- The body: each side must hold every base line, in order, with lines inserted between them.
  The union keeps the base's order; at each place, our inserted lines come first, then theirs;
  a line both sides added is kept once.
- The front matter: every write through Cairn changes ``modified`` and ``origin``, so two
  appends would otherwise never merge. It is merged field by field: a field changed on one side
  takes that side's value; ``modified`` changed on both takes the later time and ``origin``
  follows it; any other field changed differently on both sides makes the note unmergeable.
"""

from __future__ import annotations

import re
from datetime import datetime

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(\r?\n|\Z)", re.DOTALL)
_KEY = re.compile(r"([^\s#:'\"-][^:]*|'[^']*'|\"[^\"]*\"):(\s|$)")
_FOLLOWS_MODIFIED = ("origin",)


def merge(base: str, ours: str, theirs: str) -> str | None:
    """The merged text, or None when the two sides did more than add lines."""
    if ours == theirs:
        return ours
    if theirs == base:
        return ours
    if ours == base:
        return theirs
    parts = [_split_front(text) for text in (base, ours, theirs)]
    if sum(part[0] is None for part in parts) not in (0, 3):
        return None  # front matter added or removed on one side: not an addition of lines
    front = ""
    if parts[0][0] is not None:
        merged_front = _merge_front(parts[0][0], parts[1][0], parts[2][0])  # type: ignore[arg-type]
        if merged_front is None:
            return None
        front = merged_front
    body = merge_lines(parts[0][1], parts[1][1], parts[2][1])
    return None if body is None else front + body


def merge_lines(base: str, ours: str, theirs: str) -> str | None:
    """Union of two pure line additions to ``base``, or None if either side changed a line."""
    base_lines = base.split("\n")
    ours_added = _insertions(base_lines, ours.split("\n"))
    theirs_added = _insertions(base_lines, theirs.split("\n"))
    if ours_added is None or theirs_added is None:
        return None
    in_ours = {line for lines in ours_added for line in lines if line.strip()}
    out: list[str] = []
    for anchor in range(len(base_lines) + 1):
        mine = ours_added[anchor]
        spare = list(mine)
        out.extend(mine)
        for line in theirs_added[anchor]:
            if line in spare:
                spare.remove(line)  # the same line added here by both: once
            elif not (line.strip() and line in in_ours):
                out.append(line)
        if anchor < len(base_lines):
            out.append(base_lines[anchor])
    return "\n".join(out)


def _insertions(base: list[str], side: list[str]) -> list[list[str]] | None:
    """Lines ``side`` inserted before each base line (and after the last), or None when ``side``
    does not hold every base line in order. Matching each base line at its first occurrence is
    enough to tell a supersequence; a rare ambiguous match only moves an inserted blank line."""
    added: list[list[str]] = [[] for _ in range(len(base) + 1)]
    at = 0
    for line in side:
        if at < len(base) and line == base[at]:
            at += 1
        else:
            added[at].append(line)
    return added if at == len(base) else None


def _split_front(text: str) -> tuple[str | None, str]:
    match = _FRONT.match(text)
    if match is None:
        return None, text
    return match.group(0), text[match.end() :]


def _fields(front: str) -> tuple[str, str, dict[str, str], list[str]] | None:
    """(opening line, closing line, field -> its lines, field order) of a front-matter block;
    None when a line belongs to no field (a comment or stray text before the first)."""
    lines = front.splitlines(keepends=True)
    opening, closing, inner = lines[0], lines[-1], lines[1:-1]
    fields: dict[str, str] = {}
    order: list[str] = []
    current: str | None = None
    for line in inner:
        match = _KEY.match(line)
        if match and not line[:1].isspace():
            current = match.group(1)
            if current in fields:
                return None  # a field given twice: YAML would keep one; do not guess which
            fields[current] = line
            order.append(current)
        elif current is None:
            return None
        else:
            fields[current] += line
    return opening, closing, fields, order


def _merge_front(base: str, ours: str, theirs: str) -> str | None:
    split = [_fields(text) for text in (base, ours, theirs)]
    if any(part is None for part in split):
        return None
    (_, _, b, b_order), (opening, closing, o, o_order), (_, _, t, t_order) = split  # type: ignore[misc]
    names = list(dict.fromkeys([*b_order, *o_order, *t_order]))
    later = _later_side(o.get("modified"), t.get("modified"))
    merged: dict[str, str | None] = {}
    for name in names:
        bv, ov, tv = b.get(name), o.get(name), t.get(name)
        if ov == tv or tv == bv:
            merged[name] = ov
        elif ov == bv:
            merged[name] = tv
        elif (
            name == "modified"
            and ov is not None
            and tv is not None
            or name in _FOLLOWS_MODIFIED
            and later is not None
        ):
            merged[name] = ov if later == "ours" else tv
        else:
            return None
    body = "".join(value for value in merged.values() if value is not None)
    return opening + body + closing


def _later_side(ours: str | None, theirs: str | None) -> str | None:
    """Which side's ``modified`` line holds the later time ("ours" on a tie or unreadable time)."""
    if ours is None or theirs is None:
        return None
    a, b = _moment(ours), _moment(theirs)
    if a is None or b is None:
        return "ours"
    return "theirs" if b > a else "ours"


def _moment(line: str) -> float | None:
    value = line.split(":", 1)[1].strip().strip("'\"")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()
