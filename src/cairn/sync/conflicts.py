"""The conflict copies a sync leaves under ``.conflict/`` (syncer.py), and settling one of them:
keep mine (the live file stays, the copy goes), keep theirs (the file takes the copy's text) or a
merge made by hand (the file takes that text).

A copy is named ``.conflict/<vault path minus extension>__<origin>__<UTC time>[-n].<ext>``. The
file and the copy are read without following any link (``fileio``); a path outside ``.conflict/``
is refused. The live file is replaced only if it is still the version the person looked at
(``Memory.replace_text`` for a note; the same compare-and-swap on the bytes for any other file),
so a change made meanwhile is never overwritten: ``Conflict`` is raised and the copy is kept.
Deleting the copy locally is pushed by the next sync like any local deletion.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from .. import fileio
from ..errors import Conflict, DamagedNote, InvalidInput, NotFound
from ..vault import folder_scope, utf8_name
from .syncer import CONFLICT_FOLDER

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Note

KEEPS = ("mine", "theirs", "merged")
MAX_SHOWN_BYTES = 2 * 1024 * 1024  # a note is at most 2 MB; a bigger copy is shown cut, never loaded whole
_NAME = re.compile(r"(?P<stem>.+)__(?P<origin>[^/]*)__(?P<time>\d{8}T\d{6}Z)(?:-\d+)?(?P<ext>\.[^./]+)?")


@dataclass(frozen=True)
class CopyName:
    path: str  # .conflict/...
    target: str  # the live file's vault path
    origin: str  # the device whose version the copy holds
    time: str  # when the copy was made, ISO 8601


def parse(path: str) -> CopyName:
    """The parts of a conflict copy's vault path. Raises InvalidInput for any other path."""
    rel = check_path(path)
    match = _NAME.fullmatch(rel[len(CONFLICT_FOLDER) + 1 :])
    if match is None:
        raise InvalidInput(f"{rel} is not named as a conflict copy (<path>__<origin>__<time>)")
    when = datetime.strptime(match["time"], "%Y%m%dT%H%M%SZ")
    return CopyName(
        path=rel,
        target=match["stem"] + (match["ext"] or ""),
        origin=match["origin"],
        time=when.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
    )


def check_path(path: str) -> str:
    """``path`` as a clean vault-relative path inside ``.conflict/``; InvalidInput otherwise."""
    rel = (path or "").strip()
    parts = PurePosixPath(rel).parts
    if (
        "\\" in rel
        or "\0" in rel
        or rel.startswith("/")
        or len(parts) < 2
        or parts[0] != CONFLICT_FOLDER
        or any(p in ("", ".", "..") for p in rel.split("/"))
    ):
        raise InvalidInput(
            f"{path!r} is not a conflict copy: only files under {CONFLICT_FOLDER}/ can be resolved"
        )
    return rel


def copies(vault: Path) -> list[str]:
    """Every conflict copy in the vault (vault-relative), sorted; links are neither listed nor followed."""
    found: list[str] = []
    top = vault / CONFLICT_FOLDER
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.lstat(top).st_mode):
            return []
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in files:
            full = os.path.join(root, name)
            rel = Path(full).relative_to(vault).as_posix()
            with contextlib.suppress(OSError):
                if utf8_name(rel) and stat.S_ISREG(os.lstat(full).st_mode) and not name.endswith(".tmp"):
                    found.append(rel)
    return sorted(found)


def _scope_of(target: str) -> str | None:
    return folder_scope(target.split("/", 1)[0]) if "/" in target else None


def _allowed(memory: Memory, target: str) -> bool:
    """A copy of a note in a scope this Memory may not read is not shown to it."""
    scope = _scope_of(target)
    return scope is None or scope in memory.allow_scopes


def _note(memory: Memory, target: str) -> Note | None:
    """The live note at ``target``; None for a file that is no note (settings, a damaged note)."""
    scope = _scope_of(target)
    if scope is None or not target.endswith(".md"):
        return None
    try:
        return memory.read(target, scope=scope)
    except (NotFound, DamagedNote):
        return None


def _version(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()  # as ``Note.version``


def _text(data: bytes) -> str:
    return data[:MAX_SHOWN_BYTES].decode("utf-8", errors="replace")


def listing(memory: Memory, *, texts: bool = True) -> list[dict[str, Any]]:
    """The conflict copies this Memory may see, each with its live file: ``{"path", "target",
    "origin", "time", "size"}``, and with ``texts`` also ``"text"`` (the copy's), ``"note"``
    (``{"text", "version", "permalink"}`` of the live file, None when it is gone) and
    ``"note_error"`` (why the live file cannot be shown, else None)."""
    vault = memory.vault
    out = []
    for rel in copies(vault):
        try:
            name = parse(rel)
        except InvalidInput:
            name = CopyName(rel, "", "", "")  # a copy renamed by hand: listed, only "mine" settles it
        if name.target and not _allowed(memory, name.target):
            continue
        item: dict[str, Any] = {"path": rel, "target": name.target, "origin": name.origin, "time": name.time}
        try:
            data, st = fileio.read_file(vault, rel, limit=MAX_SHOWN_BYTES + 1 if texts else 0)
        except NotFound:
            continue  # removed or swapped for a link while we looked
        item["size"] = st.st_size
        if texts:
            item["text"] = _text(data)
            item["note"], item["note_error"] = _live(memory, name.target)
        out.append(item)
    return out


def _live(memory: Memory, target: str) -> tuple[dict[str, Any] | None, str | None]:
    if not target:
        return None, "this copy's name does not say which file it belongs to"
    try:
        data, _ = fileio.read_file(memory.vault, target, limit=MAX_SHOWN_BYTES + 1)
    except NotFound as exc:
        return None, exc.message
    note = _note(memory, target)
    permalink = note.permalink if note is not None else None
    return {"text": _text(data), "version": _version(data), "permalink": permalink}, None


def resolve(
    memory: Memory, path: str, keep: str, text: str | None = None, *, if_version: str | None = None
) -> dict[str, Any]:
    """Settle the conflict copy at ``path`` and remove it. ``keep``: ``mine`` (the live file
    stays as it is), ``theirs`` (it takes the copy's text) or ``merged`` (it takes ``text``).
    ``if_version`` is the live file's version the person saw (default: as it is now).

    Raises:
        InvalidInput: a path outside ``.conflict/``, an unknown ``keep``, ``merged`` without text.
        NotFound: no such copy (or it is a link), or the live file is gone.
        Conflict: the live file changed since ``if_version``; nothing written, the copy kept.
    """
    if keep not in KEEPS:
        raise InvalidInput(f"keep {keep!r}: use one of {', '.join(KEEPS)}")
    if keep == "merged" and text is None:
        raise InvalidInput("a merge by hand needs the merged text")
    name = parse(path)
    if not _allowed(memory, name.target):
        raise NotFound(f"no conflict copy {name.path} in the scopes allowed here")
    vault = memory.vault
    copy, _ = fileio.read_file(vault, name.path)  # NotFound for a missing or linked copy
    answer: dict[str, Any] = {"path": name.path, "target": name.target, "keep": keep, "version": None}
    if keep != "mine":
        if keep == "theirs":
            try:
                new = copy.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"{name.path} is not UTF-8 text: keep mine, or merge by hand") from exc
        else:
            new = text or ""
        answer["version"] = _replace(memory, name.target, new, if_version)
    with memory._writing():
        with contextlib.suppress(NotFound):  # removed meanwhile (another device settled it): done
            fileio.read_file(vault, name.path, limit=0)
            fileio.unlink(vault, name.path)
        _prune(vault, name.path)
    return answer


def _replace(memory: Memory, target: str, text: str, if_version: str | None) -> str:
    """Put ``text`` in the live file if it is still at ``if_version``; its new version."""
    vault = memory.vault
    try:
        data, _ = fileio.read_file(vault, target)
    except NotFound as exc:
        raise NotFound(f"{target} is gone; restore it first or keep mine ({exc.message})") from exc
    if if_version is not None and _version(data) != if_version:
        raise Conflict(f"{target} changed since it was shown; nothing written, the conflict copy is kept")
    wanted = if_version or _version(data)
    note = _note(memory, target)
    if note is not None:
        return memory.replace_text(note.permalink, text, wanted, scope=note.scope).version
    return _replace_bytes(memory, target, text.replace("\r\n", "\n").encode("utf-8"), wanted)


def _replace_bytes(memory: Memory, target: str, data: bytes, wanted: str) -> str:
    """A file that is not a live note (settings, a damaged note): the same compare-and-swap on its
    bytes, under the vault's write lock."""
    vault = memory.vault
    with memory._writing():
        base = fileio.read_base(vault, target)
        if base is None:
            raise NotFound(f"{target} is gone; nothing written, the conflict copy is kept")
        try:
            if _version(base.data) != wanted:
                raise Conflict(
                    f"{target} changed since it was shown; nothing written, the conflict copy is kept"
                )
            tmp = fileio.write_temp(vault / target, data)
            if not fileio.unchanged(vault, base):
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise Conflict(
                    f"{target} changed while it was saved; nothing written, the conflict copy is kept"
                )
            fileio.rename(tmp, vault / target)
        finally:
            base.close()
    return _version(data)


def _prune(vault: Path, rel: str) -> None:
    """Remove the copy's folders under ``.conflict/`` left empty (never ``.conflict`` itself)."""
    parts = rel.split("/")[:-1]
    while len(parts) > 1:
        folder = vault.joinpath(*parts)
        if os.path.islink(folder):
            return
        try:
            folder.rmdir()
        except OSError:
            return
        parts.pop()
