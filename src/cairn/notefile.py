"""How one Markdown file becomes a ``Note``: decoding, parsing and the defaults for missing fields."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from .errors import DamagedNote
from .models import Note
from .vault import content_hash, folder_scope, nfc, slugify


def decode(path: str, data: bytes) -> str:
    """UTF-8 text of a note file, or DamagedNote naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedNote(f"{path}: not valid UTF-8 at byte {exc.start}; re-save it as UTF-8") from exc


def split_path(path: str) -> tuple[str, str]:
    """``agent-x/courses/ds.md`` -> (``agent:x``, ``courses``)."""
    parts = [part for part in path.split("/") if part not in ("", ".")]  # PurePosixPath(path).parts, faster
    scope = folder_scope(parts[0]) if parts else None
    if scope is None:
        raise DamagedNote(f"{path}: not inside a scope folder")
    return scope, nfc("/".join(parts[1:-1]))  # as folders given to a filter or a write are


def derived_permalink(path: str, title: str) -> str:
    """Permalink of a hand-made note that has none: stable while the file stays where it is."""
    return f"{slugify(title)}-{hashlib.sha256(path.encode()).hexdigest()[:4]}"


def _as_tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = [t.strip() for t in value.replace("，", ",").split(",")]
    elif isinstance(value, list):
        items = [str(t).strip() for t in value if t is not None]
    else:
        items = [str(value).strip()]
    return tuple(t.lstrip("#") for t in items if t.lstrip("#"))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def load_note(
    path: str, data: bytes, *, mtime_ns: int = 0, tz: Any = None, version: str | None = None
) -> Note:
    """Parse the file at vault-relative ``path``; raises DamagedNote when it cannot be read.

    ``version`` is ``content_hash(data)`` when the caller has already worked it out.
    """
    from . import markdown  # imported here: reads of an up-to-date index never parse (yaml: ~30 ms)

    text = decode(path, data)
    try:
        doc = markdown.parse(text)
    except DamagedNote as exc:
        raise DamagedNote(f"{path}: {exc.message}") from exc
    scope, _folder = split_path(path)
    fm = doc.frontmatter
    stem = PurePosixPath(path).stem
    # On one line, as write() keeps titles: a tab or line break typed into front matter would
    # break every list and table a title is shown in.
    title = (
        " ".join((_text(fm.get("title")) or "").split())
        or " ".join((doc.title_heading or "").split())
        or stem
    )
    permalink = nfc((_text(fm.get("permalink")) or "").strip()) or derived_permalink(path, title)
    fallback_time = (
        datetime.fromtimestamp(mtime_ns / 1e9, tz).replace(microsecond=0).isoformat() if mtime_ns else ""
    )
    sensitivity = _text(fm.get("sensitivity")) or "normal"
    return Note(
        permalink=permalink,
        title=title,
        type=_text(fm.get("type")) or "note",
        tags=_as_tags(fm.get("tags")),
        scope=scope,
        path=path,
        created=_text(fm.get("created")) or fallback_time,
        modified=_text(fm.get("modified")) or fallback_time,
        origin=_text(fm.get("origin")),
        sensitivity=sensitivity.strip().lower(),
        frontmatter=dict(fm),
        body=doc.body,
        text=text,
        observations=doc.observations,
        relations=doc.relations,
        version=version or content_hash(data),
    )


_SECTION_HEADINGS = {"## observations", "## relations"}


def body_lines(note: Note) -> list[tuple[int, str, bool]]:
    """Body lines search can point at: (1-based file line, text, sensitive).

    Blank lines and the standard section headings are left out (they would only crowd
    snippets); an observation tagged ``#sensitive`` is a sensitive line.
    """
    private = {o.line for o in note.observations if any(t.casefold() == "sensitive" for t in o.tags)}
    first = note.text.count("\n", 0, len(note.text) - len(note.body)) + 1
    lines = []
    # Only "\n" ends a line, as in ``cairn.markdown``: splitlines() would also break at U+2028,
    # form feeds and the like, and every later line number would then miss its observation.
    for offset, line in enumerate(note.body.split("\n")):
        stripped = line.strip()
        if stripped and stripped.casefold() not in _SECTION_HEADINGS:
            lines.append((first + offset, stripped, first + offset in private))
    return lines
