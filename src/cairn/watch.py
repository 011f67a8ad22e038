"""Exact, cheap change notices for a local vault: Linux inotify, read without blocking.

The kernel queues an inotify event before the write or rename that caused it returns, so a
non-blocking read at the start of a call sees every change made before that call: no thread,
no polling interval, no race. Where inotify is missing or overflows, callers fall back to a
full stat scan, which is always correct.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct
import sys
import weakref
from pathlib import Path

from .vault import folder_scope

_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000

_FILE_EVENTS = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
)
_MASK = _FILE_EVENTS | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
_TREE_CHANGED = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
_HEADER = struct.Struct("iIII")


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - probe that the symbol exists
    except (OSError, AttributeError):
        return None
    return libc


def inotify_available() -> bool:
    """True where a long-running process (``cairn serve``) follows changes through inotify."""
    from .freshness import watching_wanted

    return _libc() is not None and watching_wanted()


class Watcher:
    """inotify watches on every folder of a vault's scope folders (hidden folders excluded)."""

    def __init__(self, libc: ctypes.CDLL, fd: int, root: Path) -> None:
        self._libc = libc
        self._fd = fd
        self.root = root
        self._dirs: dict[int, str] = {}  # watch descriptor -> vault-relative folder ("" = root)
        self._root_watched = False  # the vault folder itself may be gone (and come back later)
        # A Memory dropped without close() gives its inotify instance back when it is collected: a
        # user has 128 at most, and once they are gone every later Memory falls back to scanning.
        self._release = weakref.finalize(self, os.close, fd)

    @classmethod
    def start(cls, root: Path) -> Watcher | None:
        """Watch ``root``; None when inotify is unavailable here or its limits are reached."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watcher = cls(libc, fd, root)
        if not watcher.rewatch():
            watcher.close()
            return None
        return watcher

    def rewatch(self) -> bool:
        """(Re)add a watch on every folder; adding an existing watch is harmless. False on failure."""
        for rel in self._folders():
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(self.root / rel), _MASK)
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    if rel == "":
                        self._root_watched = False
                    continue  # vanished while we walked; the next scan sees it gone
                return False  # ENOSPC: the user's watch limit; fall back to scanning
            self._dirs[wd] = rel
            if rel == "":
                self._root_watched = True
        return True

    def _folders(self) -> list[str]:
        folders = [""]
        try:
            top = sorted(e.name for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            return folders
        for name in top:
            if folder_scope(name) is None:
                continue
            for current, subdirs, _files in os.walk(self.root / name):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
                folders.append(Path(current).relative_to(self.root).as_posix())
        return folders

    def changes(self) -> set[str] | None:
        """Vault-relative ``.md`` paths touched since the last call, or None when a full scan is
        needed (queue overflow, or folders created, moved or removed)."""
        if not self._root_watched:
            # The vault folder was removed: no event can say it is back, so look every time
            # (a full scan of a missing folder costs nothing) until it can be watched again.
            self.rewatch()
            return None
        changed: set[str] = set()
        rescan = False
        while True:
            try:
                data = os.read(self._fd, 256 * 1024)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
                offset += _HEADER.size + length
                if mask & _TREE_CHANGED or mask & _IN_ISDIR:
                    rescan = True
                    continue
                folder = self._dirs.get(wd)
                file_name = os.fsdecode(name)
                if folder is None or not file_name.endswith(".md") or file_name.startswith("."):
                    continue
                changed.add(f"{folder}/{file_name}" if folder else file_name)
        if rescan:
            self.rewatch()
            return None
        return changed

    def close(self) -> None:
        self._release()  # closes the descriptor the first time only
        self._fd = -1
