"""A dream's decisions as values: parsing and validation only, no IO.

``parse(raw)`` turns one JSON object into a decision or raises ``Invalid`` with the reason that
decision fails. What needs the vault (does the observation exist, did the target change since the
load) is checked when the decision is planned (``dream.plan``), so that a caller may validate a
whole batch first and apply it later, e.g. as one proposal for a person to approve.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import guard
from ..errors import CairnError
from .sections import MAX_SECTION_CHARS, check_name

KINDS = ("promote_observation", "drop_observation", "update_section", "upsert_entity", "log_only")
MAX_TEXT_CHARS = 4000
MAX_LINES = 100
MAX_DECISIONS = 500


class Invalid(Exception):
    """One decision cannot be applied; ``reason`` says why (it goes into the report)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Entity:
    title: str
    observations: tuple[str, ...] = ()  # "[category] text #tag (context)" lines
    relations: tuple[str, ...] = ()  # "type [[Target]] (context)" lines
    rev: str | None = None  # None: it must be new
    permalink: str | None = None
    folder: str = "entities"
    type: str = "note"


@dataclass(frozen=True)
class Promote:
    observation: str
    section: str
    text: str | None  # None: the observation's own content
    rev: str | None  # the section's rev; None: a new section
    entity: Entity | None = None
    title: str | None = None  # of a new section
    kind: str = "promote_observation"


@dataclass(frozen=True)
class Drop:
    observation: str
    reason: str
    kind: str = "drop_observation"


@dataclass(frozen=True)
class UpdateSection:
    section: str
    content: str
    rev: str | None
    title: str | None = None
    order: float | int | None = None
    kind: str = "update_section"


@dataclass(frozen=True)
class UpsertEntity:
    entity: Entity
    kind: str = "upsert_entity"


@dataclass(frozen=True)
class LogOnly:
    note: str
    kind: str = "log_only"


Decision = Promote | Drop | UpdateSection | UpsertEntity | LogOnly


def kind_of(raw: Any) -> str:
    kind = raw.get("kind") if isinstance(raw, Mapping) else None
    return kind if isinstance(kind, str) else "?"


def parse(raw: Any) -> Decision:
    """One decision from its JSON object.

    Raises:
        Invalid: unknown kind, a missing or mistyped field, a bad section name or observation
            line, text over its limit, or a credential in any text.
    """
    if not isinstance(raw, Mapping):
        raise Invalid("a decision must be a JSON object with a 'kind'")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise Invalid(f"unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    try:
        if kind == "promote_observation":
            entity = raw.get("entity")
            return Promote(
                observation=_text(raw, "observation", limit=200),
                section=_section(raw),
                text=_text(raw, "text", required=False),
                rev=_rev(raw),
                entity=None if entity is None else _entity(entity, "entity"),
                title=_text(raw, "title", required=False, limit=200),
            )
        if kind == "drop_observation":
            return Drop(observation=_text(raw, "observation", limit=200), reason=_text(raw, "reason"))
        if kind == "update_section":
            order = raw.get("order")
            if order is not None and (isinstance(order, bool) or not isinstance(order, int | float)):
                raise Invalid("'order' must be a number")
            return UpdateSection(
                section=_section(raw),
                content=_text(raw, "content", limit=MAX_SECTION_CHARS, empty=True),
                rev=_rev(raw),
                title=_text(raw, "title", required=False, limit=200),
                order=order,
            )
        if kind == "upsert_entity":
            return UpsertEntity(_entity(raw, None))
        return LogOnly(_text(raw, "note"))
    except CairnError as exc:  # a credential, or a line the Markdown helpers refuse
        raise Invalid(exc.message) from exc


def _text(
    raw: Mapping[str, Any],
    name: str,
    *,
    required: bool = True,
    limit: int = MAX_TEXT_CHARS,
    empty: bool = False,
) -> Any:
    value = raw.get(name)
    if value is None:
        if required:
            raise Invalid(f"missing field {name!r}")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name!r} must be text")
    if not value.strip() and not empty:
        raise Invalid(f"{name!r} is empty")
    if len(value) > limit:
        raise Invalid(f"{name!r} holds {len(value)} characters; at most {limit}")
    guard.check_text(value, where=name)
    return value


def _rev(raw: Mapping[str, Any]) -> str | None:
    rev = raw.get("rev")
    if rev is None or rev == "":
        return None
    if not isinstance(rev, str) or not rev.startswith("sha256:"):
        raise Invalid("'rev' must be the rev dream_load gave (sha256:...), or left out for a new target")
    return rev


def _section(raw: Mapping[str, Any]) -> str:
    name = raw.get("section")
    if name is None:
        raise Invalid("missing field 'section'")
    try:
        return check_name(name)
    except CairnError as exc:
        raise Invalid(exc.message) from exc


def _entity(raw: Any, where: str | None) -> Entity:
    from .. import markdown

    if not isinstance(raw, Mapping):
        raise Invalid(f"{where!r} must be an object with a title")
    title = " ".join(str(_text(raw, "title", limit=200)).split())
    lines: dict[str, list[str]] = {}
    for field in ("observations", "relations"):
        items = raw.get(field) or []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise Invalid(f"{field!r} must be a list of lines")
        if len(items) > MAX_LINES:
            raise Invalid(f"at most {MAX_LINES} {field} per decision")
        out = []
        for item in items:
            if field == "observations":
                obs = markdown.parse_observation_spec(item)
                out.append(markdown.format_observation(obs.category, obs.content, obs.tags, obs.context))
            else:
                rel = markdown.parse_relation_spec(item)
                out.append(markdown.format_relation(rel.type, rel.target, rel.context))
        guard.check_text("\n".join(out), where=field)
        lines[field] = out
    folder = raw.get("folder", "entities")
    if not isinstance(folder, str):
        raise Invalid("'folder' must be text")
    type_ = raw.get("type", "note")
    if not isinstance(type_, str) or not type_.replace("-", "").replace("_", "").isalnum():
        raise Invalid("'type' must be one word (note, person, project ...)")
    permalink = raw.get("permalink")
    if permalink is not None and not isinstance(permalink, str):
        raise Invalid("'permalink' must be text")
    return Entity(
        title=title,
        observations=tuple(lines["observations"]),
        relations=tuple(lines["relations"]),
        rev=_rev(raw),
        permalink=permalink or None,
        folder=folder,
        type=type_,
    )
