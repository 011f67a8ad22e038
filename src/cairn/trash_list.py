"""What is in the trash: each soft-deleted note's permalink, title, time of deletion and path.

Read from the files under ``<scope>/.trash/`` (the trash is not indexed). Links are never followed:
a folder or file in the trash that is a symbolic link is passed over, and each file is opened
once with ``O_NOFOLLOW``. A trashed file that no longer parses is listed with its path only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DamagedNote
from .vault import scope_folder

__all__ = ["TrashEntry", "list_trash"]


@dataclass(frozen=True)
class TrashEntry:
    """One file in a scope's trash; ``permalink``/``title`` are empty when it does not parse."""

    scope: str
    path: str  # vault-relative, e.g. user/.trash/Trip.md
    permalink: str
    title: str
    deleted: str  # ISO time written at deletion ("" if missing)
    reason: str | None = None
    mtime_ns: int = 0  # when the file was written into the trash: orders deletions in one second

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "path": self.path,
            "permalink": self.permalink,
            "title": self.title,
            "deleted": self.deleted,
            "reason": self.reason,
        }


def list_trash(vault: Path, scopes: Iterable[str]) -> list[TrashEntry]:
    """The trash of each scope, newest deletion first (then by path)."""
    from .notefile import load_note

    entries: list[TrashEntry] = []
    for scope in scopes:
        top = scope_folder(scope)
        trash = vault / top / ".trash"
        try:
            if not stat.S_ISDIR(os.lstat(trash).st_mode):
                continue  # absent, or a link: never followed
        except OSError:
            continue
        for folder, dirs, files in os.walk(trash, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
            for name in sorted(files):
                if not name.endswith(".md"):
                    continue
                full = os.path.join(folder, name)
                rel = Path(full).relative_to(vault).as_posix()
                read = _read_no_follow(full)
                if read is None:
                    continue
                data, mtime_ns = read
                try:
                    note = load_note(rel.replace("/.trash", "", 1), data)
                except DamagedNote:
                    entries.append(TrashEntry(scope, rel, "", "", "", mtime_ns=mtime_ns))
                    continue
                front = note.frontmatter
                reason = front.get("deleted_reason")
                entries.append(
                    TrashEntry(
                        scope,
                        rel,
                        note.permalink,
                        note.title,
                        str(front.get("deleted") or ""),
                        None if reason is None else str(reason),
                        mtime_ns,
                    )
                )
    entries.sort(key=lambda e: (e.deleted, e.mtime_ns, e.path), reverse=True)
    return entries


def _read_no_follow(path: str) -> tuple[bytes, int] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # a link (ELOOP), or gone since the walk
        return None
    with open(fd, "rb") as file:
        st = os.fstat(file.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        return file.read(), st.st_mtime_ns
