"""A store held in a dict: for tests, shipped as product code like httpx's ``MockTransport``.

Thread-safe, with a native compare-and-swap (one lock guards every operation). Versions are
"sha256:" content hashes, so equal versions mean equal bytes. ``memory://NAME`` URLs name one
store per process, so several vaults in one test can share a "remote".
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator

from .base import Blob, Entry, PreconditionFailed, StoreError, StoreNotFound, check_path, check_prefix

_NAMED: dict[str, MemoryStore] = {}
_NAMED_LOCK = threading.Lock()


def content_version(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class MemoryStore:
    """Files in a dict, ``path -> (bytes, version, mtime)``."""

    native_cas = True

    def __init__(self) -> None:
        self._files: dict[str, tuple[bytes, str, float]] = {}
        self._lock = threading.Lock()
        self.requests = 0

    @classmethod
    def named(cls, name: str) -> MemoryStore:
        """The one store of that name in this process (``memory://NAME``)."""
        with _NAMED_LOCK:
            return _NAMED.setdefault(name, cls())

    def list(self, prefix: str = "") -> Iterator[Entry]:
        prefix = check_prefix(prefix)
        with self._lock:
            self.requests += 1
            items = list(self._files.items())
        for path, (data, version, mtime) in items:
            if not prefix or path.startswith(prefix + "/"):
                yield Entry(path=path, size=len(data), mtime=mtime, version=version)

    def read(self, path: str) -> Blob:
        check_path(path)
        with self._lock:
            self.requests += 1
            found = self._files.get(path)
        if found is None:
            raise StoreNotFound(f"No file at {path!r} in the memory store.")
        return Blob(data=found[0], version=found[1])

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        check_path(path)
        data = bytes(data)
        version = content_version(data)
        with self._lock:
            self.requests += 1
            self._check_folders(path)
            current = self._files.get(path)
            if create_only and current is not None:
                raise PreconditionFailed(f"{path!r} already exists.")
            if if_version is not None and (current is None or current[1] != if_version):
                raise PreconditionFailed(f"{path!r} is no longer at version {if_version}.")
            self._files[path] = (data, version, time.time())
        return version

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        check_path(path)
        with self._lock:
            self.requests += 1
            current = self._files.get(path)
            if current is None:
                raise StoreNotFound(f"No file at {path!r} in the memory store.")
            if if_version is not None and current[1] != if_version:
                raise PreconditionFailed(f"{path!r} is no longer at version {if_version}.")
            del self._files[path]

    def move(self, source: str, target: str) -> None:
        check_path(source)
        check_path(target)
        with self._lock:
            self.requests += 1
            if source not in self._files:
                raise StoreNotFound(f"No file at {source!r} in the memory store.")
            if target in self._files:
                raise PreconditionFailed(f"{target!r} already exists.")
            self._check_folders(target)
            self._files[target] = self._files.pop(source)

    def close(self) -> None:
        pass

    def _check_folders(self, path: str) -> None:
        """A file cannot sit where a folder is, nor below a file, as on every real backend."""
        if any(p.startswith(path + "/") for p in self._files):
            raise StoreError(f"{path!r} is a folder.")
        parts = path.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in self._files:
                raise StoreError(f"{'/'.join(parts[:i])!r} is a file, not a folder.")


def from_url(url: str, **_credentials: str | None) -> MemoryStore:
    """``memory://NAME``: the process's store of that name."""
    name = url.split("://", 1)[1].strip("/")
    return MemoryStore.named(name or "default")
