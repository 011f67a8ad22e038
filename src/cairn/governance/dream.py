"""The dream's two calls: ``load`` (the scope with a rev per file) and ``apply`` (decisions, each
checked against the rev it was based on), plus the audit log and the generated index.

``apply`` runs each decision on its own: ``decisions.parse`` validates it, ``plan`` reads what it
touches and turns it into ``files.Change`` values (raising ``Invalid`` or ``RevConflict``), and
``files.commit`` writes them, re-checking every rev just before the write. A failed decision is
reported and the others go on. The split lets approval mode plan a whole dream first and commit
it later, when a person approves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from .. import guard
from ..errors import CairnError, InvalidInput, NotFound
from ..vault import content_hash, make_permalink, now_iso, safe_filename, safe_folder
from . import decisions, dream_config, inbox, sections
from .decisions import Decision, Drop, Entity, Invalid, LogOnly, Promote, UpdateSection, UpsertEntity
from .files import (
    INDEX_FILE,
    LOG_FILE,
    NOT_ENTITIES,
    SECTIONS,
    Change,
    Place,
    RevConflict,
    commit,
    read_bytes,
)

MAX_ENTITIES = 200  # entities a load lists (newest first); the rest are counted
MAX_SUMMARY_CHARS = 4000
REV_CONFLICT = "rev-conflict"


# -- load ---------------------------------------------------------------------------------------


def entity_path(place: Place, rel: str) -> bool:
    """True for a note of the scope that a dream may treat as an entity."""
    folder, _, rest = rel.partition("/")
    if folder != place.folder or not rest:
        return False
    if "/" not in rest:
        return rest not in (INDEX_FILE, LOG_FILE)
    return rest.split("/", 1)[0] not in NOT_ENTITIES


def load(place: Place) -> dict[str, Any]:
    """Sections, entities and open observations of the scope, each with its ``rev``.

    Sensitive sections and entities are left out: a dream (maybe a remote model) never sees them,
    and may not change them.
    """
    found, damaged = sections.read_sections(place)
    open_obs, damaged_obs = inbox.open_observations(place)
    notes = [
        n for n in place.memory.list(scope=place.scope, include_sensitive=False) if entity_path(place, n.path)
    ]
    entities = []
    for summary in notes[:MAX_ENTITIES]:
        try:
            note = place.memory.read(summary.path, scope=place.scope)
        except CairnError:
            continue
        entities.append(
            {
                "permalink": note.permalink,
                "title": note.title,
                "path": note.path,
                "observations": [_obs_line(o) for o in note.observations],
                "relations": [f"{r.type} [[{r.target}]]" for r in note.relations if not r.inline],
                "rev": note.version,
            }
        )
    config = dream_config.read(place)
    return {
        "scope": place.scope,
        "sections": [s.to_dict() for s in found if not s.sensitive],
        "entities": entities,
        "entities_more": max(0, len(notes) - MAX_ENTITIES),
        "observations": [o.to_dict() for o in open_obs],
        "damaged": damaged + damaged_obs,
        "dream_enabled": config.enabled,
    }


def _obs_line(obs: Any) -> str:
    from .. import markdown

    return markdown.format_observation(obs.category, obs.content, obs.tags, obs.context)


# -- plan ---------------------------------------------------------------------------------------


Written = dict[str, tuple[str | None, str]]  # path -> (rev at the load, rev after this apply's writes)


def _as_now(written: Written | None, rel: str, rev: str | None) -> str | None:
    """The rev a decision's ``rev`` stands for now: a file this apply already changed (an earlier
    promote into the same section) still counts as the one loaded."""
    if written and rel in written and written[rel][0] == rev:
        return written[rel][1]
    return rev


def plan(place: Place, decision: Decision, written: Written | None = None) -> tuple[list[Change], str]:
    """The file changes ``decision`` makes on the vault as it is now, and a one-line description.

    Raises:
        Invalid: an unknown observation id, a bad or sensitive target.
        RevConflict: a target changed (appeared, went) since the rev the decision names.
    """
    if isinstance(decision, Promote):
        obs = _open(place, decision.observation)
        line = " ".join((decision.text if decision.text is not None else obs.content).split())
        changes, section_rel = _section_append(place, decision, line, written)
        described = f"{obs.id} -> {section_rel}"
        if decision.entity is not None:
            entity_changes, entity_rel = _entity_changes(place, decision.entity, written)
            changes += entity_changes
            described += f" and {entity_rel}"
        changes += inbox.archive(place, obs, {"outcome": "promoted", "promoted_to": section_rel})
        return changes, described
    if isinstance(decision, Drop):
        obs = _open(place, decision.observation)
        reason = " ".join(decision.reason.split())
        return inbox.archive(place, obs, {"outcome": "dropped", "reason": reason}), f"{obs.id}: {reason}"
    if isinstance(decision, UpdateSection):
        return _section_rewrite(place, decision, written)
    if isinstance(decision, UpsertEntity):
        return _entity_changes(place, decision.entity, written)
    assert isinstance(decision, LogOnly)
    return [], " ".join(decision.note.split())[:200]


def _open(place: Place, observation_id: str) -> inbox.Observation:
    obs = inbox.find_open(place, observation_id)
    if obs is None:
        raise Invalid(
            f"unknown observation id {observation_id!r}: no open observation has it in {place.rel('inbox')} "
            "(handled by another dream, or a typo)"
        )
    return obs


def _section_now(
    place: Place, name: str, rev: str | None, written: Written | None
) -> tuple[str, sections.Section | None]:
    rel = place.rel(SECTIONS, f"{name}.md")
    rev = _as_now(written, rel, rev)
    try:
        data = read_bytes(place.vault, rel)
    except InvalidInput as exc:
        raise Invalid(f"bad target {rel}: {exc.message}") from exc
    current = None
    if data is not None:
        from ..errors import DamagedNote

        try:
            current = sections.parse(rel, data)
        except DamagedNote as exc:
            raise Invalid(f"bad target {rel}: {exc.message}; a person must mend it first") from exc
        if current.sensitive:
            raise Invalid(f"bad target {rel}: a sensitive section, which a dream never changes")
    if (current.rev if current else None) != rev:
        raise RevConflict(rel)
    return rel, current


def _next_order(place: Place) -> int:
    found, _ = sections.read_sections(place)
    orders = [s.order for s in found if s.order != float("inf")]
    return int(max(orders, default=0)) + 1


def _stamped(place: Place, text: str, updates: dict[str, Any] | None = None) -> str:
    from .. import markdown

    return markdown.set_fields(text, {"modified": now_iso(place.tz), "origin": "dream", **(updates or {})})


def _section_append(
    place: Place, decision: Promote, line: str, written: Written | None
) -> tuple[list[Change], str]:
    rel, current = _section_now(place, decision.section, decision.rev, written)
    item = f"- {line}"
    if current is None:
        title = decision.title or decision.section
        text = sections.render(sections.new_front(place, title, _next_order(place)), title, item)
        return [Change(rel, None, text.encode("utf-8"))], rel
    if any(existing.strip() == item for existing in current.content.split("\n")):
        return [], rel  # already there (a promote repeated after a crash): archive only
    text = current.text.rstrip("\n") + "\n" + item + "\n"
    if not current.content:
        text = current.text.rstrip("\n") + "\n\n" + item + "\n"
    return [Change(rel, current.rev, _stamped(place, text).encode("utf-8"))], rel


def _section_rewrite(
    place: Place, decision: UpdateSection, written: Written | None
) -> tuple[list[Change], str]:
    rel, current = _section_now(place, decision.section, decision.rev, written)
    if current is None:
        title = decision.title or decision.section
        order = decision.order if decision.order is not None else _next_order(place)
        text = sections.render(sections.new_front(place, title, order), title, decision.content)
        return [Change(rel, None, text.encode("utf-8"))], f"{rel} (new)"
    from .. import markdown

    title = decision.title or current.title
    updates: dict[str, Any] = {"title": title}
    if decision.order is not None:
        updates["order"] = decision.order
    head = _stamped(place, current.text, updates)
    doc = markdown.parse(head)
    front_text = head[: len(head) - len(doc.body)] if doc.body and head.endswith(doc.body) else head
    text = (
        front_text.rstrip("\n")
        + "\n\n"
        + f"# {title}\n"
        + (f"\n{decision.content.strip()}\n" if decision.content.strip() else "")
    )
    return [Change(rel, current.rev, text.encode("utf-8"))], rel


def _entity_changes(place: Place, entity: Entity, written: Written | None) -> tuple[list[Change], str]:
    """Changes that create the entity, or add to it the lines it lacks (a person's lines stay)."""
    from .. import markdown
    from ..notefile import load_note

    note = None
    try:
        note = place.memory.read(entity.permalink or entity.title, scope=place.scope)
    except NotFound:
        note = None
    except CairnError as exc:  # two notes with that title, a damaged file ...
        raise Invalid(f"bad target {entity.title!r}: {exc.message}") from exc
    if note is not None:
        if not entity_path(place, note.path):
            raise Invalid(f"bad target {note.path}: not an entity (sections and the inbox are not)")
        if note.sensitive:
            raise Invalid(f"bad target {note.path}: a sensitive note, which a dream never changes")
        data = read_bytes(place.vault, note.path)
        if data is None or content_hash(data) != _as_now(written, note.path, entity.rev):
            raise RevConflict(note.path)
        current = load_note(note.path, data, tz=place.tz)
        text = current.text
        have = {line.strip() for line in text.split("\n")}
        added = 0
        for heading, lines in (("Observations", entity.observations), ("Relations", entity.relations)):
            for line in lines:
                if f"- {line}" not in have:
                    text = markdown.append_to_section(text, heading, line)
                    have.add(f"- {line}")
                    added += 1
        if not added:
            return [], note.path
        return [Change(note.path, current.version, _stamped(place, text).encode("utf-8"))], note.path
    if entity.rev is not None:  # it was there at the load
        raise RevConflict(f"{place.rel(entity.folder)}/{entity.title} (gone since the load)")
    try:
        folder = safe_folder(entity.folder)
        name = safe_filename(entity.title)
    except InvalidInput as exc:
        raise Invalid(exc.message) from exc
    if folder.split("/", 1)[0] in NOT_ENTITIES:
        raise Invalid(
            f"bad target folder {entity.folder!r}: entities may not live in {folder.split('/')[0]}/"
        )
    rel = "/".join(p for p in (place.folder, folder, f"{name}.md") if p)
    now = now_iso(place.tz)
    front = {
        "title": entity.title,
        "type": entity.type,
        "permalink": make_permalink(entity.title, place.scope, place.taken()),
        "tags": [],
        "created": now,
        "modified": now,
        "origin": "dream",
        "sensitivity": "normal",
    }
    text = markdown.new_note(front, entity.title, "", entity.observations, entity.relations)
    return [Change(rel, None, text.encode("utf-8"))], rel


# -- apply --------------------------------------------------------------------------------------


def checked_batch(raw_decisions: Any, summary: str) -> str:
    """The summary, trimmed, once the batch's shape is checked (see ``apply``'s Raises)."""
    if not isinstance(raw_decisions, list):
        raise InvalidInput("decisions must be a list of objects, each with a 'kind'")
    if len(raw_decisions) > decisions.MAX_DECISIONS:
        raise InvalidInput(f"at most {decisions.MAX_DECISIONS} decisions per apply; split the dream")
    summary = (summary or "").strip()
    if len(summary) > MAX_SUMMARY_CHARS:
        raise InvalidInput(f"the summary holds at most {MAX_SUMMARY_CHARS} characters")
    guard.check_text(summary, where="summary")
    return summary


def apply(
    place: Place, raw_decisions: Any, summary: str, *, trigger: str = "api", check_on: bool = True
) -> dict[str, Any]:
    """Apply ``raw_decisions`` (a list of JSON objects) one by one; the caller holds ``place.writing()``.

    ``check_on=False`` applies while the dream is off: a person approving a dream's proposal.

    Returns:
        ``{"results": [{"index", "kind", "status", "reason", "target"}], "applied", "failed", "log"}``;
        ``reason`` is ``rev-conflict`` when a target changed since the load.
    Raises:
        DreamOff: the dream is off for the scope (nothing is applied or logged).
        InvalidInput: decisions is not a list, or too long; a summary too long.
        SecretRefused: the summary holds a credential.
    """
    if check_on:
        dream_config.require_on(place)
    summary = checked_batch(raw_decisions, summary)
    results: list[dict[str, Any]] = []
    written: Written = {}
    for index, raw in enumerate(raw_decisions):
        result: dict[str, Any] = {
            "index": index,
            "kind": decisions.kind_of(raw),
            "status": "applied",
            "reason": None,
        }
        try:
            decision = decisions.parse(raw)
            changes, described = plan(place, decision, written)
            commit(place.vault, changes)
            for change in changes:
                if change.data is not None:
                    loaded = written[change.path][0] if change.path in written else change.expected
                    written[change.path] = (loaded, content_hash(change.data))
            result["target"] = described
            result["changed"] = [c.path for c in changes]
        except RevConflict as exc:
            result.update(status="failed", reason=REV_CONFLICT, detail=exc.message, target=exc.path)
        except Invalid as exc:
            result.update(status="failed", reason=exc.reason)
        except CairnError as exc:
            result.update(status="failed", reason=exc.message)
        except OSError as exc:
            result.update(status="failed", reason=f"could not write: {exc.strerror or exc}")
        results.append(result)
    applied = sum(r["status"] == "applied" for r in results)
    log_rel = append_log(
        place,
        {
            "kind": "apply",
            "trigger": trigger,
            "applied": applied,
            "failed": len(results) - applied,
        },
        _apply_markdown(summary, results),
    )
    report: dict[str, Any] = {
        "results": results,
        "applied": applied,
        "failed": len(results) - applied,
        "log": log_rel,
    }
    try:
        report["index"] = rebuild_index(place)
    except (OSError, CairnError) as exc:  # sections are written; the next dream rebuilds it
        report["index_error"] = str(exc)
    return report


def _apply_markdown(summary: str, results: Sequence[dict[str, Any]]) -> str:
    lines = [summary or "(no summary)", ""]
    for r in results:
        if r["status"] == "applied":
            lines.append(f"- applied #{r['index']} {r['kind']}: {r.get('target', '')}".rstrip(": "))
        else:
            lines.append(f"- failed #{r['index']} {r['kind']}: {r['reason']}")
    return "\n".join(lines)


# -- log.md and index.md ---------------------------------------------------------------------------


def append_log(place: Place, header: dict[str, Any], markdown_text: str) -> str:
    """Append one entry to ``<scope>/log.md``: a line of JSON, then Markdown. Never rewrites it."""
    rel = place.rel(LOG_FILE)
    path = place.path(rel)
    at = now_iso(place.tz)
    head = json.dumps({"at": at, "scope": place.scope, **header}, ensure_ascii=False, separators=(",", ":"))
    title = f"## {at} {header.get('kind', 'entry')}"
    entry = f"{head}\n{title}\n\n{markdown_text.strip()}\n\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        raise InvalidInput(f"{rel} is a symbolic link, which Cairn does not follow")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with open(fd, "ab") as handle:
        if handle.tell() == 0:
            handle.write(b"# Dream log\n\nAppend-only: one JSON line, then Markdown, per entry.\n\n")
        handle.write(entry.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    return rel


def read_log(place: Place, limit: int = 20) -> list[dict[str, Any]]:
    """The last ``limit`` entries' JSON headers of log.md, oldest first."""
    data = read_bytes(place.vault, place.rel(LOG_FILE))
    if not data:
        return []
    heads = []
    for line in data.decode("utf-8", errors="replace").split("\n"):
        if line.startswith("{"):
            try:
                heads.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return heads[-limit:]


def rebuild_index(place: Place) -> str:
    """Write ``<scope>/index.md``: a generated overview of sections and entities with wikilinks.

    It is not a note (the scan passes it over), so its links never lift search results.
    """
    found, _ = sections.read_sections(place)
    notes = [
        n for n in place.memory.list(scope=place.scope, include_sensitive=False) if entity_path(place, n.path)
    ]
    open_obs, _ = inbox.open_observations(place)
    lines = [
        f"# Memory index ({place.scope})",
        "",
        f"Generated by the dream at {now_iso(place.tz)}; rebuilt after every dream, so edits here are lost.",
        "",
        "## Sections",
        "",
    ]
    lines += [f"- [[{s.title}]] ({s.path})" for s in found if not s.sensitive] or ["(none)"]
    lines += ["", "## Entities", ""]
    lines += [f"- [[{n.title}]] ({n.permalink})" for n in notes] or ["(none)"]
    lines += ["", "## Inbox", "", f"{len(open_obs)} open observations.", ""]
    rel = place.rel(INDEX_FILE)
    from ..vault import atomic_write

    atomic_write(place.path(rel), "\n".join(lines).encode("utf-8"))
    return rel
