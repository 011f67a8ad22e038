"""What a write checks before anything touches a file: titles, tags, types, sizes, and secrets."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InvalidInput

MAX_NOTE_BYTES = 2 * 1024 * 1024
MAX_TITLE_CHARS = 200
TYPE = re.compile(r"[\w-]{1,64}")  # used with fullmatch
RESERVED_FIELDS = ("title", "permalink", "created", "modified", "origin", "type", "tags", "sensitivity")


def clean_title(title: str) -> str:
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput("title is empty: give the note a specific, searchable title")
    title = unicodedata.normalize("NFC", " ".join(title.split()))
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title is {len(title)} characters; keep it under {MAX_TITLE_CHARS}")
    return title


def clean_tags(tags: Sequence[str]) -> list[str]:
    if isinstance(tags, str):
        tags = [tags]
    clean: list[str] = []
    for tag in tags:
        value = " ".join(str(tag).split()).lstrip("#").strip()
        if not value:
            continue
        if any(c in value for c in ",[]{}\n"):
            raise InvalidInput(
                f"tag {tag!r} may not contain commas, brackets or braces; give tags one by one"
            )
        if len(value) > 64:
            raise InvalidInput(f"tag {value[:20]!r}... is longer than 64 characters")
        if value not in clean:
            clean.append(value)
    return clean


def sensitivity_of(value: str) -> str:
    value = value.strip().lower()
    if value not in ("normal", "sensitive"):
        raise InvalidInput(f"sensitivity must be 'normal' or 'sensitive', not {value!r}")
    return value


def check_body(text: str) -> None:
    if "\x00" in text:
        raise InvalidInput("text contains a NUL character; notes are plain UTF-8 text")
    size = len(text.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise InvalidInput(
            f"text is {size / 1048576:.1f} MiB; one note holds at most {MAX_NOTE_BYTES // 1048576} MiB: split it"
        )


def check_secrets(text: str, *, sensitive: bool, where: str) -> None:
    from . import guard  # only writes need it; reads start faster without its patterns

    guard.check_text(text, sensitive=sensitive, where=where)


def guard_note(
    title: str,
    body: str,
    observations: Sequence[str],
    relations: Sequence[str],
    tags: Sequence[str],
    fields: Mapping[str, Any],
    *,
    sensitive: bool,
    note_type: str = "",
    folder: str = "",
) -> None:
    """Refuse credentials anywhere in what is about to be written (SecretRefused names where):
    the folder and the type too, which land in the file's path and front matter."""
    from . import guard  # only writes need it; reads start faster without its patterns

    guard.check_text(folder, sensitive=False, where="folder")  # a path shows everywhere
    guard.check_text(note_type, sensitive=False, where="type")
    guard.check_text(title, sensitive=sensitive, where="title")
    guard.check_text(body, sensitive=sensitive, where="body")
    for number, line in enumerate(observations, 1):
        guard.check_text(line, sensitive=sensitive, where=f"observation {number}")
    for number, line in enumerate(relations, 1):
        guard.check_text(line, sensitive=sensitive, where=f"relation {number}")
    guard.check_text(" ".join(tags), sensitive=sensitive, where="tags")
    for name, value in fields.items():
        guard.check_text(f"{name}: {value}", sensitive=sensitive, where=f"field {name}")


def observation_line(spec: str) -> str:
    from . import markdown  # only writes need it; reads start ~30 ms faster without it and yaml

    obs = markdown.parse_observation_spec(spec)
    return markdown.format_observation(obs.category, obs.content, obs.tags, obs.context)


def relation_line(spec: str) -> str:
    from . import markdown  # only writes need it; reads start ~30 ms faster without it and yaml

    rel = markdown.parse_relation_spec(spec)
    return markdown.format_relation(rel.type, rel.target, rel.context)
