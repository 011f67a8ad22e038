"""Writes: create, append, edit. Each is a change applied to the file as it is on disk, under the
vault's write lock, and applied again if another writer changed the file meanwhile (``commit``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import fileio, lifecycle, records
from .checks import (
    RESERVED_FIELDS,
    TYPE,
    check_body,
    check_secrets,
    clean_tags,
    clean_title,
    guard_note,
    observation_line,
    relation_line,
    sensitivity_of,
)
from .errors import AlreadyExists, Conflict, DamagedNote, EditMismatch, InvalidInput
from .models import Note
from .notefile import load_note
from .vault import FileStat, make_permalink, now_iso, safe_filename, safe_folder, scope_folder, utf8_name

if TYPE_CHECKING:
    from .memory import Memory

# Given the note on disk (None: no file there), the text to write; raises to write nothing.
Change = Callable[[Note | None], str]


def write(
    mem: Memory,
    scope: str,
    title: str,
    *,
    body: str,
    type: str,
    folder: str,
    tags: Sequence[str],
    observations: Sequence[str],
    relations: Sequence[str],
    fields: Mapping[str, Any] | None,
    sensitivity: str | None,
    overwrite: bool,
) -> Note:
    """``Memory.write``, once the scope is checked."""
    from . import markdown

    title = clean_title(title)
    if not TYPE.fullmatch(type or ""):
        raise InvalidInput(
            f"type {type!r} must be one word of letters, digits, '_' or '-' (e.g. note, course)"
        )
    tag_list = clean_tags(tags)
    obs_lines = [observation_line(spec) for spec in observations]
    rel_lines = [relation_line(spec) for spec in relations]
    extra = dict(fields or {})
    for name in extra:
        if name in RESERVED_FIELDS:
            raise InvalidInput(f"field {name!r} is set by Cairn or by its own parameter, not through fields")
    sensitivity = sensitivity_of(sensitivity or str(extra.pop("sensitivity", "") or "") or "normal")
    lifecycle.validate(extra, mem.tz)
    check_body(body)
    guard_note(
        title,
        body,
        obs_lines,
        rel_lines,
        tag_list,
        extra,
        sensitive=sensitivity == "sensitive",
        note_type=type,
        folder=folder,
    )
    spelled = as_spelled(mem.vault / scope_folder(scope), safe_folder(folder)) if folder else ""
    rel = "/".join(p for p in (scope_folder(scope), spelled, safe_filename(title) + ".md") if p)

    with mem._writing():
        fileio.check_inside(mem.vault, rel)
        if not os.path.lexists(mem.vault / rel) and (twin := mem._index.twin_path(rel)) is not None:
            # "python.md" beside "Python.md" would be one file on a case-insensitive drive
            # (macOS, Windows, most cloud folders), and two notes no title can tell apart.
            # Looked up in the index (just synced), not by listing a folder of 10k notes.
            rel = twin

        def change(old: Note | None) -> str:
            if old is not None and not overwrite:
                raise AlreadyExists(
                    f"a note titled {old.title!r} already exists at {rel} (permalink {old.permalink}); "
                    "add to it with append or edit instead of writing it again"
                )
            now = now_iso(mem.tz)
            front: dict[str, Any] = dict(old.frontmatter) if old else {}
            for name in ("deleted", "deleted_reason"):
                front.pop(name, None)
            front.update(
                title=title,
                type=type,
                permalink=old.permalink
                if old
                else make_permalink(title, scope, mem._index.permalinks(scope)),
                tags=tag_list,
                created=old.created if old and old.created else now,
                modified=now,
                origin=mem.origin,
                sensitivity=sensitivity,
            )
            front.update(extra)
            if front["permalink"] in lifecycle.supersedes(front):
                raise InvalidInput(
                    f"this note's permalink is {front['permalink']}, so it would supersede itself; "
                    "leave that permalink out of supersedes (a deleted note needs no replacing)"
                )
            return markdown.new_note(front, title, body, obs_lines, rel_lines)

        return commit(mem, rel, change)


def append(mem: Memory, scope: str, permalink: str, line: str) -> Note:
    """``Memory.append``, once the scope is checked."""
    from . import markdown

    spec = line.strip()
    if spec.startswith("- "):
        spec = spec[2:].strip()
    if spec.startswith("[") and not spec.startswith("[["):
        section, entry = "Observations", observation_line(spec)
    elif "[[" in spec:
        section, entry = "Relations", relation_line(spec)
    else:
        raise InvalidInput(
            f"cannot append {line[:80]!r}: write an observation '[category] text #tag (context)' "
            "or a relation 'type [[Target]]'"
        )
    with mem._writing():
        rel = mem._note_for_update(permalink, scope).path

        def change(note: Note | None) -> str:
            note = _still_there(note, rel)
            check_secrets(entry, sensitive=note.sensitive, where=section[:-1].lower())
            return stamp(mem, note, markdown.append_to_section(note.text, section, entry))

        return commit(mem, rel, change)


def edit(mem: Memory, scope: str, permalink: str, find: str, replace: str, expected: int) -> Note:
    """``Memory.edit``, once the scope is checked."""
    if not find:
        raise InvalidInput("find text is empty: give the exact text to replace")
    if expected < 1:
        raise InvalidInput("expected must be 1 or more")
    with mem._writing():
        rel = mem._note_for_update(permalink, scope).path

        def change(note: Note | None) -> str:
            note = _still_there(note, rel)
            check_secrets(replace, sensitive=note.sensitive, where="replacement text")
            count = note.text.count(find)
            if count == 0:
                raise EditMismatch(
                    f"the text to find does not occur in {note.title!r} ({note.permalink}); nothing changed. "
                    "Read the note and copy the exact text"
                )
            if count != expected:
                raise EditMismatch(
                    f"the text to find occurs {count} times in {note.title!r} ({note.permalink}), "
                    f"expected {expected}; nothing changed. Give more surrounding text, or expected={count}"
                )
            text = note.text.replace(find, replace)
            # The replacement may complete a secret with the text around it ("sk-proj-" + key).
            before = set(note.text.split("\n"))
            check_secrets(
                "\n".join(line for line in text.split("\n") if line not in before),
                sensitive=note.sensitive,
                where="edited text",
            )
            check_body(text)
            try:
                return stamp(mem, note, text)  # parses the edited text: a broken one raises here
            except DamagedNote as exc:
                raise InvalidInput(
                    f"that edit would break the note's front matter ({exc.message}); nothing changed"
                ) from exc

        return commit(mem, rel, change)


def replace_text(mem: Memory, scope: str, permalink: str, text: str, if_version: str) -> Note:
    """``Memory.replace_text``, once the scope is checked: a whole-text save that holds only
    while the file is still at ``if_version`` (a person's save from the web panel)."""
    text = text.replace("\r\n", "\n")
    with mem._writing():
        rel = mem._note_for_update(permalink, scope).path

        def change(note: Note | None) -> str:
            note = _still_there(note, rel)
            if note.version != if_version:
                raise Conflict(f"{note.title!r} ({note.path}) changed since it was read; nothing was written")
            before = set(note.text.split("\n"))
            check_secrets(
                "\n".join(line for line in text.split("\n") if line not in before),
                sensitive=note.sensitive,
                where="edited text",
            )
            check_body(text)
            if text == note.text:
                return text
            try:
                return stamp(mem, note, text)
            except DamagedNote as exc:
                raise InvalidInput(
                    f"that text would not read as a note ({exc.message}); nothing changed"
                ) from exc

        return commit(mem, rel, change)


def _still_there(note: Note | None, rel: str) -> Note:
    if note is None:
        raise Conflict(f"{rel} was removed by another program while Cairn was changing it; nothing written")
    return note


def stamp(mem: Memory, note: Note, text: str) -> str:
    """``text`` (the note changed) with ``modified`` and ``origin`` set; a hand-written note gets
    its permalink written down, so that renaming its file later keeps the permalink."""
    from . import markdown

    updates: dict[str, Any] = {"modified": now_iso(mem.tz), "origin": mem.origin}
    if not str(note.frontmatter.get("permalink") or "").strip():
        updates["permalink"] = note.permalink
    return markdown.set_fields(text, updates)


def commit(mem: Memory, rel: str, change: Change) -> Note:
    """Apply ``change`` to the note at ``rel`` as it is on disk, write the result atomically, and
    index it before returning. The caller holds the write lock (``Memory._writing``).

    The file is read once and kept open; the rename goes ahead only if the file still holds
    those bytes (size, mtime, hash), else the change is applied again to what is there now.
    Bytes appended to the old file during the rename (an external ``>>``) are added after.

    Raises:
        InvalidInput: the result would not read back as a note (nothing is written).
        Conflict: the file kept changing under the write ``fileio.MAX_MERGES`` times.
    """
    vault = mem.vault
    fileio.check_inside(vault, rel)
    path = vault / rel
    fileio.remove_stale_temps(path.parent, mem._fresh.swept)
    note: Note | None = None
    late = b""
    for attempt in range(fileio.MAX_MERGES):
        base = fileio.read_base(vault, rel)
        try:
            if note is None:
                old = load_note(rel, base.data, mtime_ns=base.mtime_ns, tz=mem.tz) if base else None
                try:
                    data = change(old).encode("utf-8")
                except EditMismatch as exc:
                    if not attempt:
                        raise
                    raise Conflict(  # it applied to the file as first read, not as changed since
                        f"{rel} changed while Cairn was editing it, and the edit no longer applies "
                        f"({exc.message})"
                    ) from exc
                try:
                    load_note(rel, data, tz=mem.tz)
                except DamagedNote as exc:
                    raise InvalidInput(f"{exc.message}; the change was not written") from None
            else:  # another writer's late bytes: at the end, where it wrote them
                data = (base.data if base else b"") + late
            tmp = fileio.write_temp(path, data)
            if base is None:
                placed = _link_new(tmp, path)
            elif fileio.unchanged(vault, base):
                fileio.rename(tmp, path)
                placed = True
            else:
                placed = False
            if not placed:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                continue
            late = base.late_bytes() if base else b""
        finally:
            if base is not None:
                base.close()
        if note is None:
            note = load_note(rel, data, tz=mem.tz)
        if not late:
            return _indexed(mem, rel, data, note)
    raise Conflict(f"{rel} kept changing while Cairn was writing it; try again")


def _link_new(tmp: Path, path: Path) -> bool:
    """Put ``tmp`` at ``path`` only if nothing is there (a new note never replaces a file)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network and FAT drives): check, then rename
        if os.path.lexists(path):
            return False
        fileio.rename(tmp, path)
        return True
    with contextlib.suppress(OSError):
        tmp.unlink()
    fileio.fsync_dir(path.parent)
    return True


def _indexed(mem: Memory, rel: str, data: bytes, note: Note) -> Note:
    """``note`` (the bytes ``data`` just written at ``rel``) put in the index, or with a notice
    that the index is behind when it cannot be changed now (the next call catches it up)."""
    from .freshness import trusted_mtime

    try:
        st = os.stat(mem.vault / rel, follow_symlinks=False)
        info = FileStat(rel, st.st_size, st.st_mtime_ns)
    except OSError:
        info = FileStat(rel, len(data), 0)
    try:  # read again: another writer's late bytes may follow the change; the file's mtime
        # dates a hand-made note without ``created``
        final = load_note(rel, data, mtime_ns=info.mtime_ns, tz=mem.tz)
    except DamagedNote:
        mem._fresh.needs_scan = True  # the scan indexes the file as damaged, and doctor names it
        return _with_notice(note, "another program's bytes added meanwhile leave the note unreadable")
    record = records.rows_of(final, size=info.size, kept_mtime=trusted_mtime(info), tz=mem.tz)
    if not mem._fresh.index_written(lambda: mem._index.insert(record), rel, info.size, record.mtime_ns):
        return _with_notice(final, "the note is written; the index is behind and catches up at the next call")
    return final


def _with_notice(note: Note, notice: str) -> Note:
    from dataclasses import replace

    return replace(note, notices=(*note.notices, notice))


def folder_on_disk(directory: Path, name: str) -> str | None:
    """The name of a folder in ``directory`` that differs from ``name`` only in case, width or
    Unicode form: macOS writes names decomposed, and two such names are one on a
    case-insensitive drive."""
    wanted = records.key(name)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError), os.scandir(directory) as entries:
        for entry in entries:
            found = entry.name
            if entry.is_dir(follow_symlinks=False) and utf8_name(found) and records.key(found) == wanted:
                return found
    return None


def as_spelled(base: Path, folder: str) -> str:
    """``folder`` (under ``base``) as the folders already on disk spell it."""
    parts: list[str] = []
    for part in folder.split("/"):
        current = base.joinpath(*parts)
        if not (current / part).is_dir():
            part = folder_on_disk(current, part) or part
        parts.append(part)
    return "/".join(parts)
