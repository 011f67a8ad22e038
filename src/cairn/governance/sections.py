"""Sections: ``<scope>/sections/<name>.md``, the curated memory a dream maintains and a person may
edit, and the projection that concatenates them for a model's context.

A section's front matter holds ``title`` and ``order``; its content is the body without the
``# title`` heading the dream writes at its top.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import DamagedNote, InvalidInput
from ..vault import content_hash, now_iso, safe_filename
from .files import SECTIONS, Place, note_files, read_bytes

DEFAULT_INJECT_CHAR_CAP = 6000
LEAST_INJECT_CHAR_CAP = 200
MAX_SECTION_CHARS = 100_000
_NAME = re.compile(r"[^/\\]{1,100}")


@dataclass(frozen=True)
class Section:
    name: str  # file name without .md
    path: str
    title: str
    order: float
    content: str
    rev: str
    sensitive: bool
    frontmatter: dict[str, Any]
    text: str

    def to_dict(self) -> dict[str, Any]:
        order: Any = (
            None if math.isinf(self.order) else (int(self.order) if self.order.is_integer() else self.order)
        )
        return {
            "name": self.name,
            "title": self.title,
            "order": order,
            "content": self.content,
            "rev": self.rev,
            "path": self.path,
        }


def check_name(name: Any) -> str:
    """A section name usable as a file name as it is (``preferences``, ``工作习惯``).

    Raises:
        InvalidInput: not text, a path, hidden, or changed by file-name cleaning.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.startswith("."):
        raise InvalidInput(f"section name {name!r} must be a plain file name without '/' (e.g. preferences)")
    try:
        clean = safe_filename(name)
    except InvalidInput as exc:
        raise InvalidInput(f"section name {name!r} is not usable as a file name") from exc
    if clean != name:
        raise InvalidInput(f"section name {name!r} is not usable as a file name; try {clean!r}")
    return name


def content_of(body: str, title: str) -> str:
    """The body without a first ``# heading`` that repeats the title, trimmed."""
    lines = body.strip("\n").split("\n")
    if lines and lines[0].startswith("# ") and lines[0][2:].strip() == title.strip():
        lines = lines[1:]
    return "\n".join(lines).strip()


def parse(rel: str, data: bytes) -> Section:
    from .. import markdown

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedNote(f"{rel}: not valid UTF-8 at byte {exc.start}") from exc
    doc = markdown.parse(text)
    front = doc.frontmatter
    name = rel.rsplit("/", 1)[-1][: -len(".md")]
    title = " ".join(str(front.get("title") or doc.title_heading or name).split())
    order = front.get("order")
    return Section(
        name=name,
        path=rel,
        title=title,
        order=float(order) if isinstance(order, int | float) and not isinstance(order, bool) else math.inf,
        content=content_of(doc.body, title),
        rev=content_hash(data),
        sensitive=str(front.get("sensitivity") or "").strip().lower() == "sensitive",
        frontmatter=dict(front),
        text=text,
    )


def read_sections(place: Place) -> tuple[list[Section], list[str]]:
    """Every section of the scope in order (``order``, then name), and the files that could not
    be read. Sensitive sections are included: callers leave them out."""
    folder = place.path(place.rel(SECTIONS))
    names = note_files(folder)
    found: list[Section] = []
    damaged: list[str] = []
    for name in names:
        rel = place.rel(SECTIONS, name)
        try:
            data = read_bytes(place.vault, rel)
            if data is not None:
                found.append(parse(rel, data))
        except (DamagedNote, InvalidInput):
            damaged.append(rel)
    found.sort(key=lambda s: (s.order, s.name))
    return found, damaged


def render(front: dict[str, Any], title: str, content: str) -> str:
    """A section file: front matter, the ``# title`` heading, the content."""
    from .. import markdown

    head = markdown.set_fields("", front) if front else ""
    body = content.strip()
    return f"{head}\n# {title}\n" + (f"\n{body}\n" if body else "")


def new_front(place: Place, title: str, order: float | int) -> dict[str, Any]:
    now = now_iso(place.tz)
    return {
        "title": title,
        "type": "section",
        "order": order,
        "created": now,
        "modified": now,
        "origin": "dream",
    }


def projection(place: Place) -> dict[str, Any]:
    """The scope's sections in order, as one text of at most ``inject_char_cap`` characters.

    Sensitive sections never appear. When the cap cuts, the text ends with a line that says so
    and names the sections to read with ``memory_read`` for the rest.

    Returns:
        ``{"scope", "text", "truncated", "chars", "cap", "sections", "omitted"}``.
    """
    cap = place.setting("inject_char_cap", DEFAULT_INJECT_CHAR_CAP, least=LEAST_INJECT_CHAR_CAP)
    sections, _damaged = read_sections(place)
    shown = [s for s in sections if not s.sensitive and s.content]
    blocks = [f"## {s.title}\n\n{s.content}\n" for s in shown]
    whole = "\n".join(blocks)
    if len(whole) <= cap:
        return {
            "scope": place.scope,
            "text": whole,
            "truncated": False,
            "chars": len(whole),
            "cap": cap,
            "sections": [s.name for s in shown],
            "omitted": [],
        }
    # Room is kept for the longest closing line any cut could need, so the whole stays within the cap.
    reserve = max(len(_marker(cap, [s.path for s in shown[i:]])) for i in range(len(shown)))
    budget = cap - reserve - 1
    kept: list[str] = []
    cut_at = len(shown)
    for i, block in enumerate(blocks):
        used = len("\n".join(kept))
        sep = 1 if kept else 0
        if used + sep + len(block) <= budget:
            kept.append(block)
            continue
        cut_at = i
        partial = _cut_lines(block, budget - used - sep)
        if partial:
            kept.append(partial)
        break
    marker = _marker(cap, [s.path for s in shown[cut_at:]])
    text = "\n".join(kept).rstrip("\n") + "\n" + marker
    return {
        "scope": place.scope,
        "text": text,
        "truncated": True,
        "chars": len(text),
        "cap": cap,
        "sections": [s.name for s in shown[:cut_at]],
        "omitted": [s.path for s in shown[cut_at:]],
    }


def _marker(cap: int, rest: list[str]) -> str:
    names = ", ".join(rest[:5]) + (f" and {len(rest) - 5} more" if len(rest) > 5 else "")
    return (
        f"[memory cut at {cap} characters (inject_char_cap): call memory_read for the rest, "
        f"starting with {names}]"
    )


def _cut_lines(block: str, room: int) -> str:
    """The whole lines of ``block`` that fit in ``room`` characters (with the heading, or nothing)."""
    out: list[str] = []
    used = 0
    for line in block.split("\n"):
        if used + len(line) + 1 > room:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) if len(out) > 2 else ""
