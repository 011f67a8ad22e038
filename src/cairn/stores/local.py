"""A folder as a store: a remote stand-in for tests, or a mounted drive (``file:///path``).

Assumes a POSIX file system with ``flock`` and ``rename``. Every write is a temp file
(``.NAME.RANDOM.tmp``) in the target's own folder, fsynced, then renamed over the target, so no
reader ever sees half a file; listings skip such temp files. Compare-and-swap holds among every
``LocalStore`` on the folder, threads and processes alike, because each check-and-rename runs
under an exclusive ``flock`` on the root folder; a person editing a file by hand takes no lock,
and sync re-reads after writing for that reason. Versions are "sha256:" content hashes (cached
per inode, size and mtime, so a re-list does not re-read unchanged files). Symlinks that lead out
of the root are neither listed nor followed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .base import (
    Blob,
    Entry,
    PreconditionFailed,
    StoreError,
    StoreNotFound,
    Unreachable,
    check_path,
    check_prefix,
)
from .memory import content_version

_TEMP = re.compile(r"^\..*\.tmp$")


class LocalStore:
    """Files under one folder."""

    native_cas = True
    requests = 0

    def __init__(self, root: str | os.PathLike[str], *, create: bool = False) -> None:
        root_path = Path(root).expanduser()
        if create:
            root_path.mkdir(parents=True, exist_ok=True)
        if not root_path.is_dir():
            raise Unreachable(f"The store folder {str(root_path)!r} does not exist (is the drive mounted?).")
        self.root = root_path.resolve()
        self._hashes: dict[tuple[int, int, int, int, int], str] = {}
        self._hash_lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[Entry]:
        prefix = check_prefix(prefix)
        top = self._inside(prefix) if prefix else self.root
        if not top.is_dir():
            return
        for folder, dirs, files in os.walk(top, followlinks=False):
            dirs.sort()
            for name in sorted(files):
                if _TEMP.match(name):
                    continue
                full = Path(folder, name)
                try:
                    real = Path(os.path.realpath(full))
                    if not real.is_relative_to(self.root):
                        continue
                    st = os.stat(full)
                    version = self._version(full, st)
                except (FileNotFoundError, IsADirectoryError, PermissionError):
                    continue  # gone, a link to a folder, or unreadable: not a file we can sync
                rel = full.relative_to(self.root).as_posix()
                yield Entry(path=rel, size=st.st_size, mtime=st.st_mtime, version=version)

    def read(self, path: str) -> Blob:
        full = self._inside(check_path(path))
        if not Path(os.path.realpath(full)).is_relative_to(self.root):
            raise StoreNotFound(f"{path!r} is a link out of {self.root}; it is not read.")
        try:
            data = full.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise StoreNotFound(f"No file at {path!r} in {self.root}.") from exc
        except OSError as exc:
            raise StoreError(f"Cannot read {path!r} in {self.root}: {exc.strerror}.") from exc
        return Blob(data=data, version=content_version(data))

    # -- writing -----------------------------------------------------------------------------

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        full = self._inside(check_path(path))
        data = bytes(data)
        try:
            full.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._temp_copy(full, data)
        except OSError as exc:
            raise StoreError(f"Cannot write {path!r} in {self.root}: {exc.strerror}.") from exc
        try:
            with self._locked():
                if create_only:
                    self._link_new(tmp, full, path)
                else:
                    if if_version is not None:
                        current = self._current_version(full)
                        if current != if_version:
                            raise PreconditionFailed(f"{path!r} is no longer at version {if_version}.")
                    elif full.is_dir():
                        raise StoreError(f"{path!r} is a folder in {self.root}.")
                    os.replace(tmp, full)
                _fsync_folder(full.parent)
        except OSError as exc:
            raise StoreError(f"Cannot write {path!r} in {self.root}: {exc.strerror}.") from exc
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return content_version(data)

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        full = self._inside(check_path(path))
        with self._locked():
            current = self._current_version(full)
            if current is None:
                raise StoreNotFound(f"No file at {path!r} in {self.root}.")
            if if_version is not None and current != if_version:
                raise PreconditionFailed(f"{path!r} is no longer at version {if_version}.")
            try:
                os.unlink(full)
            except OSError as exc:
                raise StoreError(f"Cannot delete {path!r} in {self.root}: {exc.strerror}.") from exc

    def move(self, source: str, target: str) -> None:
        src = self._inside(check_path(source))
        dst = self._inside(check_path(target))
        with self._locked():
            if not src.is_file():
                raise StoreNotFound(f"No file at {source!r} in {self.root}.")
            if os.path.lexists(dst):
                raise PreconditionFailed(f"{target!r} already exists in {self.root}.")
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.rename(src, dst)
                _fsync_folder(dst.parent)
            except OSError as exc:
                raise StoreError(f"Cannot move {source!r} to {target!r}: {exc.strerror}.") from exc

    def close(self) -> None:
        pass

    # -- helpers -----------------------------------------------------------------------------

    def _inside(self, rel: str) -> Path:
        """The absolute path, refusing one whose folder resolves out of the root."""
        full = self.root / rel
        real = Path(os.path.realpath(full.parent))
        if not real.is_relative_to(self.root):
            raise StoreError(f"{rel!r} leads out of the store folder {self.root} through a link.")
        return full

    def _version(self, full: Path, st: os.stat_result) -> str:
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with self._hash_lock:
            known = self._hashes.get(key)
        if known is not None:
            return known
        digest = hashlib.sha256()
        with open(full, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        version = "sha256:" + digest.hexdigest()
        with self._hash_lock:
            self._hashes[key] = version
        return version

    def _current_version(self, full: Path) -> str | None:
        try:
            st = os.stat(full)
            if not full.is_file():
                return None
            return self._version(full, st)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _temp_copy(self, full: Path, data: bytes) -> str:
        fd, tmp = tempfile.mkstemp(prefix="." + full.name[:60] + ".", suffix=".tmp", dir=full.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            os.unlink(tmp)
            raise
        return tmp

    def _link_new(self, tmp: str, full: Path, path: str) -> None:
        """Put the finished temp file at ``full`` only if nothing is there, atomically."""
        try:
            os.link(tmp, full)
        except FileExistsError as exc:
            raise PreconditionFailed(f"{path!r} already exists in {self.root}.") from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            # No hard links (FAT, some FUSE drives): check, then rename, still under the lock.
            if os.path.lexists(full):
                raise PreconditionFailed(f"{path!r} already exists in {self.root}.") from exc
            os.replace(tmp, full)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive flock on the root folder: one fresh descriptor per call, so threads of
        this process exclude each other exactly as other processes do."""
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def from_url(url: str, **_credentials: str | None) -> LocalStore:
    """``file:///absolute/path`` (or ``file://localhost/...``): an existing folder."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or not parts.path:
        raise StoreError(f"A file remote is file:///absolute/path, not {url!r}.")
    return LocalStore(unquote(parts.path))
