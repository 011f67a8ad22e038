"""The ``cairn-export`` document: one JSON object, one record per note, validated whole.

A record is what a person or another tool needs to rebuild the note and nothing of the index::

    {"scope": "user", "path": "courses/数据结构.md", "title": "数据结构",
     "frontmatter": {...}, "observations": [...], "relations": [...], "body": "# 数据结构\\n..."}

``frontmatter`` and ``body`` (the text after the front matter, exactly as in the file) are what an
import writes; ``title``, ``observations`` and ``relations`` are derived from them, for readers of
the JSON, and an import checks that they still agree: a record edited in one place and not the
other is refused rather than half applied.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..errors import CairnError, DamagedNote, InvalidInput
from ..models import Note
from ..notefile import load_note
from ..vault import folder_scope, scope_folder, validate_scope

FORMAT = "cairn-export"
VERSION = 1
RECORD_FIELDS = ("scope", "path", "title", "frontmatter", "observations", "relations", "body")
_REQUIRED = ("scope", "path", "title", "frontmatter", "body")
_MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class Checked:
    """A record that passed validation: where it goes, the text to write and that text parsed."""

    scope: str
    path: str  # relative to the scope folder
    text: str
    note: Note


# -- paths ----------------------------------------------------------------------------------------


def check_path(path: object) -> str:
    """A note path relative to its scope folder (``courses/ds.md``), as given, or InvalidInput:
    relative, ``/`` separated, ending in ``.md``, no ``..``, no dot-folders (the trash)."""
    if not isinstance(path, str) or not path:
        raise InvalidInput("must be a path such as 'folder/note.md'")
    if "\\" in path or "\x00" in path or any(ord(c) < 32 for c in path):
        raise InvalidInput(f"{path!r} may not hold backslashes or control characters")
    parts = path.split("/")
    if PurePosixPath(path).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise InvalidInput(f"{path!r} must be a relative path without empty, '.' or '..' parts")
    if any(p.startswith(".") for p in parts):
        raise InvalidInput(f"{path!r} is inside a hidden folder (.trash and the like hold no notes)")
    if any(len(p.encode("utf-8")) > _MAX_NAME_BYTES for p in parts):
        raise InvalidInput(f"{path!r} has a name longer than {_MAX_NAME_BYTES} bytes")
    if not parts[-1].endswith(".md") or parts[-1] == ".md":
        raise InvalidInput(f"{path!r} must name a Markdown file ending in .md")
    return path


# -- note <-> record ------------------------------------------------------------------------------


def note_text(frontmatter: Mapping[str, Any], body: str) -> str:
    """The file text of a note with this front matter and body (the body kept byte for byte)."""
    from .. import markdown

    nl = "\r\n" if body.split("\n", 1)[0].endswith("\r") else "\n"
    empty = f"---{nl}---{nl}"
    if not frontmatter:
        # A body whose first line is "---" would read as front matter without the empty fence.
        return empty + body if body.split("\n", 1)[0].rstrip("\r").rstrip() == "---" else body
    return markdown.set_fields(empty + body, dict(frontmatter))


def parse_text(rel: str, text: str, tz: Any = None) -> Note:
    """``text`` read as the note at vault path ``rel``; InvalidInput when it is not a note."""
    try:
        return load_note(rel, text.encode("utf-8"), tz=tz)
    except DamagedNote as exc:
        raise InvalidInput(exc.message) from None
    except UnicodeEncodeError:
        raise InvalidInput(f"{rel}: the text holds a lone surrogate, which UTF-8 cannot store") from None


def canonical(value: Any) -> str:
    """One spelling of a JSON value, to compare front matter without ``1 == True`` surprises."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def same_note(a: Note, b: Note) -> bool:
    """Whether two notes hold the same front matter (values and order) and body."""
    return a.body == b.body and canonical(a.frontmatter) == canonical(b.frontmatter)


def derived(note: Note) -> dict[str, Any]:
    """The fields of a record read from the note: title, observations, relations."""
    return {
        "title": note.title,
        "observations": [
            {"category": o.category, "content": o.content, "tags": list(o.tags), "context": o.context}
            for o in note.observations
        ],
        "relations": [
            {"type": r.type, "target": r.target, "context": r.context, "inline": r.inline}
            for r in note.relations
        ],
    }


def json_problem(value: Any, where: str = "frontmatter") -> str | None:
    """Why a front-matter value cannot travel through JSON unchanged (None when it can)."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} holds {value!r}, which JSON cannot carry"
    if isinstance(value, list):
        return next((p for i, v in enumerate(value) if (p := json_problem(v, f"{where}[{i}]"))), None)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r}, which is not text"
            if problem := json_problem(item, f"{where}.{key}"):
                return problem
        return None
    return f"{where} holds a {type(value).__name__} value, which JSON cannot carry"


def record_of(note: Note, *, include_sensitive: bool) -> dict[str, Any]:
    """The record of ``note``. Without ``include_sensitive`` its ``#sensitive`` observation lines
    are left out of the body (the note itself is left out by the caller when it is sensitive).

    Raises:
        InvalidInput: the front matter holds a value JSON cannot carry (a YAML binary, a set).
    """
    if problem := json_problem(note.frontmatter):
        raise InvalidInput(problem)
    body = note.body
    private = {o.line for o in note.observations if any(t.casefold() == "sensitive" for t in o.tags)}
    if private and not include_sensitive:
        first = note.text.count("\n", 0, len(note.text) - len(note.body)) + 1
        lines = body.split("\n")
        body = "\n".join(line for offset, line in enumerate(lines) if first + offset not in private)
        note = parse_text(note.path, note_text(note.frontmatter, body))
    scope_dir, _, path = note.path.partition("/")
    return ordered(
        {
            "scope": folder_scope(scope_dir),
            "path": path,
            **derived(note),
            "frontmatter": note.frontmatter,
            "body": body,
        }
    )


def ordered(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's fields in the documented order."""
    return {name: record[name] for name in RECORD_FIELDS if name in record}


# -- validation -----------------------------------------------------------------------------------


def _error(where: str, exc: CairnError) -> CairnError:
    """The same kind of error, its message prefixed with the record and field it is about."""
    return type(exc)(f"{where}: {exc.message}")


def check_record(record: Any, where: str, *, tz: Any = None) -> Checked:
    """One record checked whole; errors name the field (``notes[3].frontmatter: ...``).

    Raises:
        InvalidInput: a missing or mistyped field, a bad path or scope, text that is not a note,
            or derived fields that disagree with the front matter and body.
        SecretRefused: a credential anywhere in the note.
    """
    from .. import guard

    if not isinstance(record, dict):
        raise InvalidInput(f"{where}: must be an object with {', '.join(_REQUIRED)}")
    for name in _REQUIRED:
        if name not in record:
            raise InvalidInput(f"{where}.{name}: missing")
    for name in record:
        if name not in RECORD_FIELDS:
            raise InvalidInput(f"{where}.{name}: unknown field (a record has {', '.join(RECORD_FIELDS)})")
    for name, kind in (("scope", str), ("path", str), ("title", str), ("body", str), ("frontmatter", dict)):
        if not isinstance(record[name], kind):
            raise InvalidInput(f"{where}.{name}: must be {'an object' if kind is dict else 'text'}")
    for name in ("observations", "relations"):
        if name in record and not isinstance(record[name], list):
            raise InvalidInput(f"{where}.{name}: must be a list")
    try:
        scope = validate_scope(record["scope"])
    except CairnError as exc:
        raise _error(f"{where}.scope", exc) from None
    try:
        path = check_path(record["path"])
    except CairnError as exc:
        raise _error(f"{where}.path", exc) from None
    if problem := json_problem(record["frontmatter"]):
        raise InvalidInput(f"{where}.{problem}")
    if "\x00" in record["body"]:
        raise InvalidInput(f"{where}.body: holds a NUL character; notes are plain UTF-8 text")
    try:
        text = note_text(record["frontmatter"], record["body"])
        note = parse_text(f"{scope_folder(scope)}/{path}", text, tz)
    except CairnError as exc:
        raise _error(f"{where}.frontmatter", exc) from None
    if canonical(note.frontmatter) != canonical(record["frontmatter"]) or note.body != record["body"]:
        raise InvalidInput(f"{where}.frontmatter: does not read back as given once written")
    got = derived(note)
    if record["title"] != got["title"]:
        raise InvalidInput(
            f"{where}.title: {record['title']!r} is not the title its front matter and body give "
            f"({got['title']!r}); change the front matter's title (or the heading) too"
        )
    for name in ("observations", "relations"):
        if name in record and canonical(record[name]) != canonical(got[name]):
            raise InvalidInput(
                f"{where}.{name}: differ from the {name} in the body; edit the body, which is what is written"
            )
    try:
        guard.check_text(text, sensitive=note.sensitive, where="the note")
    except CairnError as exc:
        raise _error(where, exc) from None
    return Checked(scope, path, text, note)


def check_document(data: Any, *, tz: Any = None) -> list[Checked]:
    """Every record of a ``cairn-export`` document checked before anything is written.

    Raises:
        InvalidInput (or SecretRefused) naming the first bad record: ``notes[12].title: missing``.
    """
    if not isinstance(data, dict):
        raise InvalidInput("the document must be a JSON object with format, version and notes")
    if data.get("format") != FORMAT:
        raise InvalidInput(f"format: expected {FORMAT!r}, found {data.get('format')!r}")
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        raise InvalidInput(f"version: {version!r} is not a version this Cairn reads (it reads {VERSION})")
    if not isinstance(data.get("notes"), list):
        raise InvalidInput("notes: missing, or not a list")
    checked: list[Checked] = []
    places: dict[tuple[str, str], int] = {}
    permalinks: dict[tuple[str, str], int] = {}
    for number, record in enumerate(data["notes"]):
        where = f"notes[{number}]"
        item = check_record(record, where, tz=tz)
        place = (item.scope, item.path.casefold())
        if place in places:
            raise InvalidInput(f"{where}.path: same file as notes[{places[place]}]")
        owner = (item.scope, item.note.permalink)
        if owner in permalinks:
            raise InvalidInput(
                f"{where}.frontmatter: permalink {item.note.permalink!r} is also notes[{permalinks[owner]}]'s"
            )
        places[place], permalinks[owner] = number, number
        checked.append(item)
    return checked
