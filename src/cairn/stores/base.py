"""The contract between Cairn and wherever a vault's files live (DESIGN section 6).

A ``Store`` holds files under "/"-separated relative paths and nothing else: no locks, no push, no
atomic rename across files. What it does offer is a *version* token for each file (an ETag, a
Seafile object id, a content hash) and, where the backend has one, a native compare-and-swap:
``write(..., if_version=V)`` succeeds only while the file is still at version ``V``, and
``write(..., create_only=True)`` only while there is no file at all. Sync builds everything else
(merge on push, conflicts, the outbox) on these few operations.

Errors, all under ``StoreError``:

    StoreError            anything the remote did that Cairn did not ask for
    +-- PreconditionFailed  if_version / create_only did not hold: someone else wrote first
    +-- StoreNotFound       no file at that path
    +-- AuthFailed          401/403: the credential is wrong, expired or revoked
    +-- Unreachable         connection refused, DNS, TLS, timeouts, 5xx after retries
    +-- InvalidPath         a path that is empty, absolute, holds ".." or a control character

Backends translate their library's errors into these at the edge (``raise ... from exc``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import CairnError


class StoreError(CairnError):
    code = "store_error"
    exit_code = 13


class PreconditionFailed(StoreError):
    code = "precondition_failed"


class StoreNotFound(StoreError):
    code = "store_not_found"


class AuthFailed(StoreError):
    code = "auth_failed"
    exit_code = 14


class Unreachable(StoreError):
    code = "unreachable"
    exit_code = 15


class InvalidPath(StoreError):
    code = "invalid_path"
    exit_code = 2


@dataclass(frozen=True, slots=True)
class Entry:
    """One file as a listing reports it."""

    path: str  # relative to the store's root, "/"-separated, no leading "/"
    size: int
    mtime: float  # seconds since the epoch, as the backend reports it (may be coarse)
    version: str  # opaque; equal tokens mean equal bytes for this backend


@dataclass(frozen=True, slots=True)
class Blob:
    """A file's bytes and the version of exactly those bytes."""

    data: bytes
    version: str


@runtime_checkable
class Store(Protocol):
    """Where a vault's files live. Paths are relative, "/"-separated, never ``..``."""

    #: True when ``write(if_version=...)`` / ``create_only`` are enforced by the backend itself;
    #: False when the store can only check, then write (a race window sync must re-verify).
    native_cas: bool

    #: How many requests this store has sent to its backend so far (0 for local stores): what
    #: sync reports as ``requests`` and the benchmark counts.
    requests: int

    def list(self, prefix: str = "") -> Iterator[Entry]:
        """Every file at or below ``prefix`` (a folder path, "" for all), in no promised order."""
        ...

    def read(self, path: str) -> Blob:
        """The file's bytes and their version. Raises ``StoreNotFound``."""
        ...

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        """Write the whole file, creating folders as needed; returns the new version.

        Raises ``PreconditionFailed`` when ``if_version`` is given and the file is not at that
        version (or is gone), or when ``create_only`` and a file is already there.
        """
        ...

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        """Remove the file. Raises ``StoreNotFound``, or ``PreconditionFailed`` on a version
        mismatch where the backend can tell."""
        ...

    def move(self, source: str, target: str) -> None:
        """Rename within the store; fails with ``PreconditionFailed`` when ``target`` exists."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def check_path(path: str) -> str:
    """The path as every backend takes it: relative, "/"-separated, no empty, "." or ".." part.

    Raises ``InvalidPath`` rather than letting a hostile name reach a server or the file system.
    """
    if not isinstance(path, str) or not path:
        raise InvalidPath("A store path cannot be empty.")
    if path.startswith("/") or "\\" in path:
        raise InvalidPath(f"A store path is relative and uses '/': {path!r}.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise InvalidPath(f"A store path cannot hold control characters: {path!r}.")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise InvalidPath(f"A store path cannot have empty, '.' or '..' parts: {path!r}.")
    return path


def check_prefix(prefix: str) -> str:
    """A folder prefix for ``list``: "" for everything, else a checked path without its end "/"."""
    prefix = prefix.strip("/")
    return check_path(prefix) if prefix else ""
