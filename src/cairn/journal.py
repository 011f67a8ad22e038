"""The monthly journal: ``<scope>/journal/YYYY-MM.md``, one timestamped line per entry.

An entry is an observation line, ``- [entry] TEXT (2026-11-04T10:22:00+08:00 · ORIGIN)``, with
any line breaks of TEXT folded into spaces, appended at the end of the file. The front matter is
written once, when the month's first entry makes the file, and never again (it has no
``modified``: the file's mtime stands in for it), so two devices that append to the same month
produce edits that are only added lines at the end, which a sync merges without a conflict.
A sensitive entry carries ``#sensitive``, the line rule that keeps it out of search results,
snapshots and exports unless they ask for it.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .models import Note
from .vault import make_permalink, now_iso, scope_folder

if TYPE_CHECKING:
    from .memory import Memory

CATEGORY = "entry"
MAX_ENTRY_CHARS = 4000
_MONTH = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
_SEPARATOR = " · "


@dataclass(frozen=True)
class Entry:
    """One journal line as read back."""

    time: str
    origin: str
    text: str
    sensitive: bool
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "origin": self.origin,
            "text": self.text,
            "sensitive": self.sensitive,
            "line": self.line,
        }


def now(tz: tzinfo) -> str:
    """The time an entry is stamped with (ISO 8601 with offset); tests replace it."""
    return now_iso(tz)


def check_month(month: str) -> str:
    """``2026-11`` as given, or InvalidInput."""
    month = (month or "").strip()
    if not _MONTH.fullmatch(month):
        raise InvalidInput(f"month {month!r} must be written YYYY-MM, e.g. 2026-11")
    return month


def month_path(scope_dir: str, moment_or_month: str) -> str:
    """``user/journal/2026-11.md`` for a time or a month."""
    return f"{scope_dir}/journal/{moment_or_month[:7]}.md"


def entry_line(text: str, *, moment: str, origin: str, sensitive: bool) -> str:
    """The entry as an observation line without its leading ``- ``.

    Raises:
        InvalidInput: empty text, or longer than ``MAX_ENTRY_CHARS``.
    """
    from . import markdown

    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("journal entry is empty: write what happened")
    folded = " ".join(text.split())
    if len(folded) > MAX_ENTRY_CHARS:
        raise InvalidInput(f"journal entry is {len(folded)} characters; keep it under {MAX_ENTRY_CHARS}")
    # The origin ends the line inside "(...)": brackets of its own would end the context early.
    where = " ".join(re.sub(r"[()\[\]]", "", origin or "").split()) or "unknown"
    tags = ("sensitive",) if sensitive else ()
    return markdown.format_observation(CATEGORY, folded, tags, f"{moment}{_SEPARATOR}{where}")


def new_month(moment: str, entry: str, *, origin: str, scope: str, taken: Container[str]) -> str:
    """The text of a month's journal holding its first entry."""
    from . import markdown

    month = moment[:7]
    title = f"Journal {month}"
    permalink = f"journal-{month}"
    if permalink in taken:
        permalink = make_permalink(title, scope, taken)
    front = {
        "title": title,
        "type": "journal",
        "permalink": permalink,
        "tags": ["journal"],
        "created": moment,
        "origin": origin,
        "sensitivity": "normal",
    }
    return markdown.new_note(front, title, "", [entry])


def appended(text: str, entry: str) -> str:
    """``text`` with the entry added as its last line (the Observations section is the last)."""
    from . import markdown

    return markdown.append_to_section(text, "Observations", entry)


def entries(note: Note, *, include_sensitive: bool = False) -> list[Entry]:
    """The entries of a month's journal, in file order."""
    found = []
    for obs in note.observations:
        if obs.category != CATEGORY:
            continue
        sensitive = any(t.casefold() == "sensitive" for t in obs.tags)
        if sensitive and not include_sensitive:
            continue
        moment, _, origin = (obs.context or "").partition(_SEPARATOR)
        text = obs.content
        if sensitive:
            text = re.sub(r"\s*(?<!\S)#sensitive\b", "", text, flags=re.IGNORECASE).strip()
        found.append(Entry(moment, origin, text, sensitive, obs.line))
    return found


def append_entry(mem: Memory, scope: str, text: str, *, sensitive: bool) -> Note:
    """Add one entry to this month's journal of ``scope``; the caller holds the write lock.

    The entry is added to the file as it is on disk when written (``writes.commit``), so a line
    another device appended meanwhile is kept.
    """
    from . import checks, writes

    moment = now(mem.tz)
    entry = entry_line(text, moment=moment, origin=mem.origin, sensitive=sensitive)
    checks.check_secrets(entry, sensitive=sensitive, where="journal entry")
    rel = month_path(scope_folder(scope), moment)

    def change(old: Note | None) -> str:
        if old is not None:
            updated = appended(old.text, entry)
        else:
            taken = mem._index.permalinks(scope)
            updated = new_month(moment, entry, origin=mem.origin, scope=scope, taken=taken)
        checks.check_body(updated)
        return updated

    return writes.commit(mem, rel, change)
