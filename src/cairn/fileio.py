"""The vault's files as Cairn touches them: never through a symbolic link, never over bytes that
another writer added since they were read, and one writer at a time across every process.

- Every path is opened folder by folder from the vault's own folder with ``O_NOFOLLOW``: a link
  anywhere on the way (the note, ``.trash``, a folder), even one swapped in after a check, is
  refused, never followed out of the vault.
- A write reads the file once (``Base``), keeps it open, and renames over it only if it still
  holds those bytes; bytes appended to the old file after that check (a ``>>`` appender racing
  the rename) are read back through the descriptor kept open, and written again.
- ``VaultLock`` is a ``flock`` on ``<vault>/.cairn/write.lock``: it lives with the vault, so every
  process on one machine shares it whatever its ``CAIRN_HOME``. ``.cairn/`` is no scope folder, so
  it is neither indexed nor a note; sync leaves it out (docs/freshness.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import math
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidInput, NotFound
from .vault import FolderError, fsync_dir, inside_vault, utf8_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: writes are serialised within the process only
    fcntl = None  # type: ignore[assignment]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO named like a note must not hang a read
_BY_FD = os.open in os.supports_dir_fd and bool(_NOFOLLOW)
STALE_TEMP_SECONDS = 60  # a temp file this old is left over from a killed write
LOCK_FOLDER = ".cairn"  # at the vault's top: not a scope folder, so never scanned or indexed
MAX_MERGES = 20  # re-reads of a file that keeps changing under a write before it gives up


class Linked(NotFound):
    """The path leads through a symbolic link (or is one): Cairn does not follow it."""


def check_inside(vault: Path, rel: str) -> None:
    """Refuse ``rel`` when it is reached through a symbolic link (see ``vault.inside_vault``)."""
    if not inside_vault(vault, vault / rel):
        raise InvalidInput(
            f"{rel} is reached through a symbolic link; Cairn does not read or write through links, "
            "which could lead out of the vault"
        )


def _walk(vault: Path, parts: list[str]) -> int:
    """A descriptor of the folder ``vault/parts...``, each step opened without following a link."""
    fd = os.open(vault, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parts:
            step = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(vault: Path, rel: str) -> int:
    """A read-only descriptor of the regular file at vault-relative ``rel``, opened once, with no
    link followed on the way or at the end.

    Raises:
        NotFound: the file is gone, or is (or lies behind) a symbolic link (``Linked``), or is not
            a regular file.
    """
    parts = rel.split("/")
    try:
        if _BY_FD:
            folder = _walk(vault, parts[:-1])
            try:
                fd = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=folder)
            finally:
                os.close(folder)
        else:  # pragma: no cover - no dir_fd (Windows): check the path, then open
            if not inside_vault(vault, vault / rel):
                raise OSError(errno.ELOOP, "symbolic link")
            fd = os.open(vault / rel, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError as exc:
        raise NotFound(f"{rel} no longer exists") from exc
    except OSError as exc:
        if exc.errno == errno.ENOTDIR and not _behind_a_link(vault, parts[:-1]):
            raise NotFound(f"{rel} does not exist: a file stands where one of its folders should be") from exc
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise Linked(f"{rel} is (or lies behind) a symbolic link, which Cairn does not follow") from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotFound(f"{rel} is not a regular file")
    return fd


def _behind_a_link(vault: Path, folders: list[str]) -> bool:
    """True when one of ``folders`` (walked from the vault) is a symbolic link: ENOTDIR is then a
    link refused, not a plain file standing where a folder should be."""
    current = vault
    for part in folders:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            return False
    return False


def read_file(vault: Path, rel: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """Bytes (at most ``limit`` of them) and stat of the file at ``rel``, from one open (``open_file``)."""
    fd = open_file(vault, rel)
    with open(fd, "rb") as file:
        st = os.fstat(fd)
        return (file.read() if limit is None else file.read(limit)), st


@dataclass
class Base:
    """A file as a write read it, held open until the write is done (``close``)."""

    rel: str
    data: bytes
    ino: int
    size: int
    mtime_ns: int
    fd: int

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def late_bytes(self) -> bytes:
        """Bytes appended to this file after it was read (it may be renamed over already)."""
        now = os.fstat(self.fd).st_size
        return os.pread(self.fd, now - self.size, self.size) if now > self.size else b""


def read_base(vault: Path, rel: str) -> Base | None:
    """The file at ``rel`` as a write starts from it; None when there is none."""
    try:
        fd = open_file(vault, rel)
    except Linked:
        raise
    except NotFound:  # gone; or something that is not a regular file stands there
        if os.path.lexists(vault / rel):
            raise
        return None
    try:
        st = os.fstat(fd)
        data = _read_all(fd)
    except BaseException:
        os.close(fd)
        raise
    return Base(rel, data, st.st_ino, len(data), st.st_mtime_ns, fd)


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def unchanged(vault: Path, base: Base | None) -> bool:
    """True while the file is still what ``base`` read: same file, size, mtime and bytes (hash)."""
    path = vault / base.rel if base is not None else None
    if base is None or path is None:
        return True
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if (st.st_ino, st.st_size, st.st_mtime_ns) != (base.ino, base.size, base.mtime_ns):
        return False
    # Same size and mtime (a sync client sets mtimes): the bytes decide.
    now = os.pread(base.fd, base.size + 1, 0)
    return hashlib.blake2b(now).digest() == hashlib.blake2b(base.data).digest()


def rename(tmp: Path, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FolderError(path.parent, exc) from exc
    fsync_dir(path.parent)


def remove_stale_temps(
    folder: Path, swept: dict[Path, float], *, older_than: float = STALE_TEMP_SECONDS
) -> int:
    """Remove ``.*.tmp`` files in ``folder`` left by writes killed midway; returns how many.
    ``swept`` (folder -> when it was last swept) keeps it to once a minute per folder: listing a
    folder of 10k notes at every write would cost milliseconds each time."""
    now = time.time()
    if now - swept.get(folder, -math.inf) < older_than:
        return 0
    swept[folder] = now
    removed = 0
    cutoff = now - older_than
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            with contextlib.suppress(OSError):
                if (
                    entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff
                ):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def trash_files(vault: Path, scope_dir: str) -> Iterator[str]:
    """Vault-relative paths of the ``*.md`` files in ``<scope_dir>/.trash``, never through a link:
    a ``.trash`` that is itself a link, or a linked folder or file inside it, is passed over."""
    try:
        top = _walk(vault, [scope_dir, ".trash"])
    except OSError:
        return
    stack = [(top, f"{scope_dir}/.trash")]
    while stack:
        fd, prefix = stack.pop()
        try:
            with os.scandir(fd) as entries:
                items = [
                    (e.name, e.is_file(follow_symlinks=False), e.is_dir(follow_symlinks=False))
                    for e in entries
                ]
        finally:
            os.close(fd)
        for name, is_file, is_dir in sorted(items):
            if not utf8_name(name):
                continue
            if is_file and name.endswith(".md"):
                yield f"{prefix}/{name}"
            elif is_dir:
                with contextlib.suppress(OSError):
                    stack.append((_walk(vault, [*prefix.split("/"), name]), f"{prefix}/{name}"))


def unlink(vault: Path, rel: str) -> None:
    """Remove the file at ``rel`` (never through a link on the way: a link itself is only unlinked)."""
    parts = rel.split("/")
    if not _BY_FD:  # pragma: no cover
        check_inside(vault, rel)
        os.unlink(vault / rel)
        return
    folder = _walk(vault, parts[:-1])
    try:
        os.unlink(parts[-1], dir_fd=folder)
    finally:
        os.close(folder)


class VaultLock:
    """One writer at a time on a vault: threads are the caller's (an RLock); processes share a
    ``flock`` on ``<vault>/.cairn/write.lock``, whatever their ``CAIRN_HOME``."""

    def __init__(self, vault: Path) -> None:
        self.path = vault / LOCK_FOLDER / "write.lock"

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        except OSError as exc:
            raise FolderError(self.path.parent, exc) from exc
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock
