"""Soft delete and restore: a deleted note moves to ``<scope>/.trash/`` and comes back from there.

Nothing here follows a symbolic link (``fileio``): a link placed in the trash, or a ``.trash``
that is itself a link, is passed over, so restore never imports an outside file nor removes one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import fileio
from .checks import check_secrets
from .errors import AlreadyExists, CairnError, Conflict, DamagedNote, NotFound
from .models import Damaged, Note
from .notefile import load_note
from .vault import atomic_write, bare_permalink, iso_to_ts, make_permalink, now_iso, scope_folder

if TYPE_CHECKING:
    from .memory import Memory

_DELETED_FIELDS = ("deleted", "deleted_reason")


@dataclass(frozen=True)
class Trashed:
    """A note in the trash: where it lies, and when it was deleted (newest first sorts first)."""

    path: str
    note: Note  # parsed as if at its old place (a hand-made note's permalink derives from it)
    deleted_ts: float


def original_path(trash_rel: str) -> str:
    return trash_rel.replace("/.trash", "", 1)


def trashed(mem: Memory, scope: str) -> list[Trashed]:
    """Every readable note in the scope's trash, newest deletion first."""
    found: list[Trashed] = []
    for rel in fileio.trash_files(mem.vault, scope_folder(scope)):
        try:
            data, st = fileio.read_file(mem.vault, rel)
            note = load_note(original_path(rel), data, mtime_ns=st.st_mtime_ns, tz=mem.tz)
        except (NotFound, DamagedNote):
            continue
        when = iso_to_ts(note.frontmatter.get("deleted"), mem.tz) or st.st_mtime_ns / 1e9
        found.append(Trashed(rel, note, when))
    found.sort(key=lambda t: (-t.deleted_ts, t.path))
    return found


def count(mem: Memory, scopes: tuple[str, ...]) -> int:
    return sum(1 for scope in scopes for _ in fileio.trash_files(mem.vault, scope_folder(scope)))


def free_path(vault: Path, rel: str) -> str:
    """``rel``, or ``name (2).md``, ``name (3).md``... when it is taken: never overwrite."""
    candidate = rel
    stem, suffix = rel[: -len(".md")], ".md"
    number = 2
    while (vault / candidate).exists() or (vault / candidate).is_symlink():
        candidate = f"{stem} ({number}){suffix}"
        number += 1
    return candidate


def delete(mem: Memory, scope: str, permalink: str, reason: str | None) -> Note:
    """``Memory.delete``, once the scope is checked. Returns the note as it now lies in the trash."""
    with mem._writing():
        return delete_held(mem, scope, permalink, reason)


def delete_held(mem: Memory, scope: str, permalink: str, reason: str | None) -> Note:
    """``delete`` for a caller that holds the write lock (an approved proposal)."""
    from . import markdown

    rel = mem._note_for_update(permalink, scope).path
    scope_dir, _, rest = rel.partition("/")
    for _ in range(fileio.MAX_MERGES):
        base = fileio.read_base(mem.vault, rel)
        if base is None:
            raise NotFound(f"{rel} no longer exists")
        try:
            note = load_note(rel, base.data, mtime_ns=base.mtime_ns, tz=mem.tz)
            if reason:  # it is written into the note, which the trash keeps in the vault
                check_secrets(reason, sensitive=note.sensitive, where="reason")
            target = free_path(mem.vault, f"{scope_dir}/.trash/{rest}")
            fileio.check_inside(mem.vault, target)
            updates: dict[str, Any] = {"deleted": now_iso(mem.tz)}
            if reason:
                updates["deleted_reason"] = reason.strip()
            if not str(note.frontmatter.get("permalink") or "").strip():
                updates["permalink"] = note.permalink  # restore finds it by this, wherever it lies
            data = markdown.set_fields(note.text, updates).encode("utf-8")
            atomic_write(mem.vault / target, data)
            if not fileio.unchanged(mem.vault, base):
                fileio.unlink(mem.vault, target)
                continue
            fileio.unlink(mem.vault, rel)
            late = base.late_bytes()
        finally:
            base.close()
        if late:  # appended by another program while the file was being removed: kept
            data = markdown.set_fields((base.data + late).decode("utf-8", "replace"), updates).encode()
            atomic_write(mem.vault / target, data)
        mem._fresh.index_written(lambda: mem._index.remove(rel), rel, None, None)
        return replace(load_note(rel, data, tz=mem.tz), path=target)
    raise Conflict(f"{rel} kept changing while Cairn was deleting it; try again")


def restore(mem: Memory, scope: str, permalink: str) -> Note:
    """``Memory.restore``, once the scope is checked: the newest deleted copy comes back."""
    from . import markdown
    from .writes import commit

    permalink = bare_permalink(permalink)
    with mem._writing():
        copies = [t for t in trashed(mem, scope) if t.note.permalink == permalink]
        if not copies:
            raise NotFound(f"no deleted note with permalink {permalink!r} in the trash of scope {scope}")
        newest, older = copies[0], copies[1:]
        notices: list[str] = []
        if older:
            notices.append(
                f"the trash keeps {len(older)} older cop{'y' if len(older) == 1 else 'ies'} with this "
                f"permalink: {', '.join(t.path for t in older)}"
            )
        live = mem._index.rows_by_permalink((scope,), permalink)
        here = original_path(newest.path).rpartition("/")[0]
        if any(row.title == newest.note.title and row.path.rpartition("/")[0] == here for row in live):
            # The same note in the same folder: restored before (or never fully deleted).
            if _interrupted_delete(mem, newest, live[0].path):
                fileio.unlink(mem.vault, newest.path)
                note = mem._load(live[0].path)
                return replace(
                    note, notices=(*notices, "an interrupted delete left a copy in the trash; it is removed")
                )
            raise AlreadyExists(
                f"{newest.note.title!r} ({permalink}) is in the vault already, at {live[0].path}; "
                f"the trash copy stays at {newest.path}: compare the two and edit by hand"
            )
        target = free_path(mem.vault, original_path(newest.path))
        renamed: dict[str, Any] = {}
        if live:
            renamed["permalink"] = make_permalink(newest.note.title, scope, mem._index.permalinks(scope))
            notices.append(
                f"{live[0].path} took the permalink {permalink} meanwhile: the restored note is "
                f"{renamed['permalink']}"
            )
        if target != original_path(newest.path):
            notices.append(f"{original_path(newest.path)} is taken: restored beside it as {target}")
        text = markdown.set_fields(newest.note.text, renamed, remove=_DELETED_FIELDS)

        def change(old: Note | None) -> str:
            if old is not None:
                raise Conflict(f"{target} appeared while restoring; nothing changed, try again")
            return text

        restored = commit(mem, target, change)
        with contextlib.suppress(FileNotFoundError):
            fileio.unlink(mem.vault, newest.path)
        return replace(restored, notices=(*restored.notices, *notices))


def _interrupted_delete(mem: Memory, copy: Trashed, live_path: str) -> bool:
    """True when the trash copy is the live note with the delete's fields added: a delete that
    stopped between writing the copy and removing the note (it never said it was done)."""
    from . import markdown

    try:
        live = mem._load(live_path)
    except CairnError:
        return False
    return markdown.set_fields(copy.note.text, {}, remove=_DELETED_FIELDS) == markdown.set_fields(
        live.text, {}, remove=_DELETED_FIELDS
    )


def settle(mem: Memory, scopes: tuple[str, ...]) -> list[Damaged]:
    """Notes both live and in the trash under one permalink. A copy left by an interrupted delete
    (nothing but the delete's fields differ) is removed, as that delete never said it was done;
    any other pair is left for a person, and named."""
    said: list[Damaged] = []
    for scope in scopes:
        for copy in trashed(mem, scope):
            live = mem._index.rows_by_permalink((scope,), copy.note.permalink)
            if not live:
                continue
            if _interrupted_delete(mem, copy, live[0].path):
                with mem._writing(), contextlib.suppress(FileNotFoundError):
                    fileio.unlink(mem.vault, copy.path)
                said.append(
                    Damaged(
                        copy.path, f"left by an interrupted delete of {live[0].path}, which stays: removed"
                    )
                )
            else:
                said.append(
                    Damaged(
                        copy.path,
                        f"in the trash with the permalink of the live note {live[0].path}; "
                        "restore refuses it until one of the two is renamed or removed",
                    )
                )
    return said
