"""Moving whole notes between the vault and an export document: the file side of import and export.

Import writes each note's text exactly as the document gives it (front matter kept), so it does
not go through ``writes.write``, which stamps new times; it goes through ``writes.commit`` like
every other write: atomic, checked against a second writer, indexed at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import checks, writes
from ..errors import AlreadyExists, DamagedNote, NotFound
from ..freshness import unnamed_file
from ..models import Damaged, Note
from ..vault import folder_scope, inside_vault, scan_notes, scope_folder, utf8_name
from . import document

if TYPE_CHECKING:
    from ..memory import Memory


def notes_for_export(mem: Memory, scopes: Sequence[str]) -> tuple[list[Note], list[Damaged]]:
    """The notes of ``scopes`` in path order, and the files passed over (damaged, unnamed)."""
    notes: list[Note] = []
    skipped: list[Damaged] = []
    for rel in sorted(scan_notes(mem.vault)):
        if folder_scope(rel.partition("/")[0]) not in scopes:
            continue
        if not utf8_name(rel):
            skipped.append(unnamed_file(rel))
            continue
        try:
            notes.append(mem._load(rel))
        except DamagedNote as exc:
            skipped.append(Damaged(rel, exc.message.removeprefix(f"{rel}: ")))
        except NotFound:
            continue  # removed since the folder was listed
    return notes, skipped


def plan(mem: Memory, notes: Sequence[tuple[str, str, str]]) -> list[tuple[str, Note, str]]:
    """Each (scope, path in scope, text) checked and parsed, before any lock is taken."""
    planned: list[tuple[str, Note, str]] = []
    for scope, path, text in notes:
        rel = f"{scope_folder(scope)}/{document.check_path(path)}"
        note = document.parse_text(rel, text, mem.tz)
        checks.check_body(text)
        checks.check_secrets(text, sensitive=note.sensitive, where=rel)
        planned.append((scope, note, text))
    return planned


def put(
    mem: Memory, planned: Sequence[tuple[str, Note, str]], *, replace: bool, dry_run: bool
) -> list[tuple[str, str]]:
    """Decide every note first; write only when none conflicts. The caller holds the write lock."""
    outcome: list[tuple[str, str]] = []
    claimed: dict[tuple[str, str], str] = {}
    for scope, note, _text in planned:
        # A dry run says "changed" where a real run without replace would refuse.
        outcome.append(_status(mem, scope, note, replace or dry_run, claimed))
    if dry_run:
        return outcome
    for status, detail in outcome:
        if status == "conflict":
            raise AlreadyExists(f"{detail}; nothing was imported")
    for (_scope, note, text), (status, _) in zip(planned, outcome, strict=True):
        if status != "same":
            writes.commit(mem, note.path, lambda _old, text=text: text)
    return outcome


def _status(
    mem: Memory, scope: str, note: Note, replace: bool, claimed: dict[tuple[str, str], str]
) -> tuple[str, str]:
    rel = note.path
    status = "new"
    if not inside_vault(mem.vault, mem.vault / rel):
        return "conflict", f"{rel} is reached through a symbolic link"
    if (claimed_by := claimed.setdefault((scope, note.permalink), rel)) != rel:
        return "conflict", f"{rel} has the permalink {note.permalink!r} of {claimed_by} in this import"
    if (mem.vault / rel).exists():
        try:
            old = mem._load(rel)
        except DamagedNote as exc:
            return "conflict", f"{rel} is a damaged file, never overwritten ({exc.message})"
        if document.same_note(old, note):
            return "same", rel
        if not replace:
            return "conflict", f"a different note is already at {rel} (replace overwrites it)"
        status = "changed"
    elif (twin := mem._index.twin_path(rel)) is not None:
        return "conflict", f"{rel} would be the same file as {twin} on a case-insensitive drive"
    for row in mem._index.rows_by_permalink((scope,), note.permalink):
        if row.path != rel:
            return "conflict", f"{rel}: the note at {row.path} already has permalink {note.permalink!r}"
    return status, rel
