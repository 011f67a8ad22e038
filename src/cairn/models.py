"""Value types shared by every layer. Pure data: no IO, no identity beyond their fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Observation:
    """One ``- [category] content #tag (context)`` line of a note."""

    category: str
    content: str
    tags: tuple[str, ...] = ()
    context: str | None = None
    line: int = 0  # 1-based line number in the file; 0 when not taken from a file


@dataclass(frozen=True)
class Relation:
    """One ``- relation_type [[Target]] (context)`` line, or an inline ``[[link]]`` (``links_to``)."""

    type: str
    target: str
    context: str | None = None
    line: int = 0
    inline: bool = False


@dataclass(frozen=True)
class Note:
    """A note as read from the vault.

    ``path`` is relative to the vault root with ``/`` separators; ``text`` is the whole file.
    """

    permalink: str
    title: str
    type: str
    tags: tuple[str, ...]
    scope: str
    path: str
    created: str
    modified: str
    origin: str | None
    sensitivity: str
    frontmatter: dict[str, Any]
    body: str
    text: str
    observations: tuple[Observation, ...] = ()
    relations: tuple[Relation, ...] = ()
    version: str = ""  # "sha256:<hex>" of the file bytes
    # What a write did beyond the obvious, for the faces to show: the index is behind, an older
    # copy stays in the trash, the note got a new permalink ... (empty for a read).
    notices: tuple[str, ...] = ()

    @property
    def sensitive(self) -> bool:
        return self.sensitivity == "sensitive"

    def to_dict(self, *, include_text: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "permalink": self.permalink,
            "title": self.title,
            "type": self.type,
            "tags": list(self.tags),
            "scope": self.scope,
            "path": self.path,
            "created": self.created,
            "modified": self.modified,
            "origin": self.origin,
            "sensitivity": self.sensitivity,
            "version": self.version,
            "frontmatter": self.frontmatter,
            "observations": [
                {
                    "category": o.category,
                    "content": o.content,
                    "tags": list(o.tags),
                    "context": o.context,
                    "line": o.line,
                }
                for o in self.observations
            ],
            "relations": [
                {"type": r.type, "target": r.target, "context": r.context, "line": r.line, "inline": r.inline}
                for r in self.relations
            ],
        }
        if self.notices:
            data["notices"] = list(self.notices)
        if include_text:
            data["text"] = self.text
        return data


@dataclass(frozen=True)
class NoteSummary:
    """A row of ``Memory.list``: enough to show and pick a note without reading it."""

    permalink: str
    title: str
    type: str
    tags: tuple[str, ...]
    scope: str
    path: str
    created: str
    modified: str
    sensitivity: str = "normal"

    def to_dict(self) -> dict[str, Any]:
        return {
            "permalink": self.permalink,
            "title": self.title,
            "type": self.type,
            "tags": list(self.tags),
            "scope": self.scope,
            "path": self.path,
            "created": self.created,
            "modified": self.modified,
            "sensitivity": self.sensitivity,
        }


@dataclass(frozen=True)
class Related:
    """One hop from a hit: the relation and where it points (``permalink`` is None while unresolved)."""

    type: str
    target: str
    permalink: str | None
    direction: str = "out"  # "out": this note -> target; "in": another note -> this note

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "target": self.target,
            "permalink": self.permalink,
            "direction": self.direction,
        }


@dataclass(frozen=True)
class Hit:
    """One search result: a note, pointed at its best-matching line."""

    permalink: str
    title: str
    type: str
    tags: tuple[str, ...]
    modified: str
    path: str
    line: int
    snippet: str
    score: float
    scope: str = "user"
    sensitive: bool = False
    related: tuple[Related, ...] = ()
    version: str = ""
    expires: str | None = None
    superseded_by: tuple[str, ...] = ()  # current notes that replace this one: it is not current
    claim: Claim | None = None
    disagreement: tuple[Claim, ...] = ()  # other current notes claiming another value for the same key
    coverage: float | None = None  # share of the query's weight the note holds; None without a query

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "permalink": self.permalink,
            "title": self.title,
            "type": self.type,
            "tags": list(self.tags),
            "modified": self.modified,
            "path": self.path,
            "line": self.line,
            "snippet": self.snippet,
            "score": float(f"{self.score:.6g}"),
            "coverage": None if self.coverage is None else round(self.coverage, 3),
            "scope": self.scope,
            "sensitive": self.sensitive,
            "related": [r.to_dict() for r in self.related],
        }
        # Only present when they say something, to keep results short in a context window.
        if self.expires:
            data["expires"] = self.expires
        if self.superseded_by:
            data["superseded_by"] = list(self.superseded_by)
        if self.claim:
            data["claim"] = self.claim.to_dict()
        if self.disagreement:
            data["disagreement"] = [c.to_dict() for c in self.disagreement]
        return data


@dataclass(frozen=True)
class Claim:
    """The value one note claims for a key (``knowledge.claim``), with where it comes from."""

    key: str
    value: str | None
    permalink: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "permalink": self.permalink, "path": self.path}


@dataclass(frozen=True)
class Damaged:
    """A file that does not parse. It is reported, never rewritten."""

    path: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "error": self.error}


@dataclass(frozen=True)
class RefreshReport:
    """What a refresh or reindex saw and did."""

    scanned: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    damaged: tuple[Damaged, ...] = ()
    # Files this refresh saw and could not index at all (a name that is not UTF-8), with the reason.
    skipped: tuple[Damaged, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "damaged": [d.to_dict() for d in self.damaged],
            "skipped": [d.to_dict() for d in self.skipped],
        }


@dataclass(frozen=True)
class DoctorReport:
    """Health of a vault and its index."""

    vault: str
    index: str
    notes: int
    damaged: tuple[Damaged, ...] = ()
    duplicate_permalinks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unresolved_relations: int = 0
    trashed: int = 0
    # Worth knowing, not damage: a note indexed only in part (too large), an interrupted delete
    # settled, a note both live and in the trash.
    warnings: tuple[Damaged, ...] = ()
    unresolved: tuple[tuple[str, str, str], ...] = ()  # (path, type, target), the first 200
    conflicts: tuple[str, ...] = ()  # sync's conflict copies under .conflict/, to read and clear

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.duplicate_permalinks

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "vault": self.vault,
            "index": self.index,
            "notes": self.notes,
            "damaged": [d.to_dict() for d in self.damaged],
            "duplicate_permalinks": [
                {"permalink": p, "paths": list(paths)} for p, paths in self.duplicate_permalinks
            ],
            "unresolved_relations": self.unresolved_relations,
            "trashed": self.trashed,
            "warnings": [w.to_dict() for w in self.warnings],
            "unresolved": [{"path": p, "type": t, "target": g} for p, t, g in self.unresolved],
            "conflicts": list(self.conflicts),
        }


@dataclass(frozen=True)
class ContextNode:
    """A note reached while walking relations, with how it was reached."""

    note: NoteSummary
    depth: int
    via: str | None = None  # relation type that led here
    from_permalink: str | None = None
    direction: str = "out"  # "out": from_permalink -via-> this note; "in": this note -via-> from_permalink

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.note.to_dict(),
            "depth": self.depth,
            "via": self.via,
            "from": self.from_permalink,
            "direction": self.direction,
        }


@dataclass(frozen=True)
class Context:
    """``Memory.context``: the notes a ``memory://`` URL names, and what their relations reach."""

    url: str
    primary: tuple[Note, ...]
    related: tuple[ContextNode, ...] = ()
    unresolved: tuple[Relation, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "primary": [n.to_dict(include_text=False) | {"body": n.body} for n in self.primary],
            "related": [r.to_dict() for r in self.related],
            "unresolved": [{"type": r.type, "target": r.target} for r in self.unresolved],
        }
