"""Import: check everything first, then plan each note (new / same / changed), then write.

A ``cairn-export`` document is all or nothing: the first bad record stops the import before
anything is written. Other tools' folders and files are read as they are found: what cannot be
imported (a damaged file, a link, a secret) is skipped and reported, and the rest goes in. Either
way a note that would overwrite a different one (without ``replace``) or take another note's
permalink stops the whole import unwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CairnError, InvalidInput
from .document import Checked, check_document, check_record, derived, note_text, parse_text
from .importers import FOLDER_KINDS, Skipped, Source, load_json, read_folder, read_mem0

if TYPE_CHECKING:
    from ..memory import Memory

KINDS = ("cairn", *FOLDER_KINDS, "mem0")


@dataclass
class ImportReport:
    """What an import did (or, in a dry run, would do), note by note."""

    source: str
    kind: str
    dry_run: bool
    notes: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {"new": 0, "same": 0, "changed": 0, "conflict": 0}
        for item in self.notes:
            counts[item["status"]] = counts.get(item["status"], 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "from": self.kind,
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "notes": self.notes,
            "skipped": [s.to_dict() for s in self.skipped],
        }


def import_source(
    memory: Memory,
    source: Path,
    *,
    kind: str = "cairn",
    scope: str | None = None,
    replace: bool = False,
    dry_run: bool = False,
) -> ImportReport:
    """Import ``source`` into ``memory``.

    Args:
        kind: ``cairn`` (a ``cairn-export`` JSON file), ``basic-memory`` or ``obsidian`` (a
            folder), ``mem0`` (mem0's exported memories, JSON).
        scope: put every note in this scope (default: a document's own scopes; for other
            sources the memory's default scope).
        replace: overwrite a different note found at a note's path.
        dry_run: report new / same / changed for each note and write nothing.

    Raises:
        InvalidInput: an unreadable source, or the first bad record of a document.
        AlreadyExists: a note conflicts with the vault (nothing is written).
        SecretRefused: a credential in a document's note.
    """
    if kind not in KINDS:
        raise InvalidInput(f"cannot import from {kind!r}: choose one of {', '.join(KINDS)}")
    target = scope or memory.scope
    report = ImportReport(str(source), kind, dry_run)
    if kind == "cairn":
        checked = check_document(load_json(source), tz=memory.tz)
        origins = [f"notes[{i}]" for i in range(len(checked))]
    else:
        found = read_folder(source, target, memory.tz) if kind in FOLDER_KINDS else read_mem0(source, target)
        checked, origins = _check_found(found, memory.tz, report)
    if scope:
        checked = [Checked(scope, c.path, c.text, c.note) for c in checked]
    if write_mode(memory) == "propose":
        return propose_import(memory, checked, origins, report)
    items = [(c.scope, c.path, c.text) for c in checked]
    outcome = memory.put_notes(items, replace=replace, dry_run=dry_run)
    for item, origin, (status, detail) in zip(checked, origins, outcome, strict=True):
        entry = {"source": origin, "path": detail if status != "conflict" else None, "status": status}
        entry |= {"scope": item.scope, "permalink": item.note.permalink, "title": item.note.title}
        if status == "conflict":
            entry["reason"] = detail
        elif status == "changed" and dry_run and not replace:
            entry["reason"] = "a different note is there: import with replace to overwrite it"
        report.notes.append(entry)
    return report


def _check_found(found: Source, tz: Any, report: ImportReport) -> tuple[list[Checked], list[str]]:
    """The records of another tool that pass the checks; the rest skipped with the reason."""
    report.skipped.extend(found.skipped)
    checked: list[Checked] = []
    origins: list[str] = []
    taken: dict[tuple[str, str], str] = {}
    for record, origin in zip(found.records, found.origins, strict=True):
        try:
            if not record["title"]:  # another tool's note: its title is what Cairn reads in it
                text = note_text(record["frontmatter"], record["body"])
                record = record | {"title": derived(parse_text("user/" + record["path"], text))["title"]}
            item = check_record(record, origin)
        except CairnError as exc:
            report.skipped.append(Skipped(origin, exc.message.removeprefix(f"{origin}: ")))
            continue
        key = (item.scope, item.note.permalink)
        if key in taken:
            report.skipped.append(
                Skipped(origin, f"permalink {item.note.permalink!r} is also {taken[key]}'s")
            )
            continue
        taken[key] = origin
        checked.append(item)
        origins.append(origin)
    return checked, origins


def write_mode(memory: Memory) -> str:
    """``direct`` or ``propose`` (issue 35's approval mode), once Memory says which."""
    return str(getattr(memory, "write_mode", "direct") or "direct")


def propose_import(
    memory: Memory, checked: list[Checked], origins: list[str], report: ImportReport
) -> ImportReport:
    """HOOK for ``write_mode = "propose"``: one proposal per note instead of a write.

    ``Memory.propose_note(scope, path, text)`` makes one proposal per note (a person approves
    each, ``cairn proposals``); a Memory without it refuses, so that nothing is written behind
    an approval mode's back. A note already there with the same text is ``same``.
    """
    propose = getattr(memory, "propose_note", None)
    if propose is None:
        raise InvalidInput(
            "this vault is in write_mode 'propose', and this Cairn cannot yet propose an import; "
            "nothing was imported"
        )
    from ..governance.proposals import Unchanged

    for item, origin in zip(checked, origins, strict=True):
        entry = {"source": origin, "path": item.note.path, "scope": item.scope, "title": item.note.title}
        try:
            proposal = propose(item.scope, item.path, item.text)
        except Unchanged:
            report.notes.append(entry | {"status": "same"})
            continue
        proposed = proposal["proposal"] if isinstance(proposal, dict) else str(proposal)
        report.notes.append(entry | {"status": "proposed", "proposal": proposed})
    return report
