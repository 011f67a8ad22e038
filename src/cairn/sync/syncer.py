"""One sync of a vault folder with its remote store: pull what changed there, push what changed
here, merge where both changed (DESIGN section 6, seed 000 section 5.2).

The caller holds the vault's writer lock (threads and processes of this machine), so Cairn's own
writes wait; a person's editor does not, so every local replace re-reads the file first and a
file that changed meanwhile is looked at again rather than overwritten.

Per file, with B the base (the last synced bytes), L the local file and R the remote's:
- L == B, R == B: nothing.           - L == R: both hold the same; remember it.
- only R changed: take R (a remote deletion deletes the unchanged local file).
- only L changed: write it with ``if_version`` (or ``create_only``); a local deletion deletes the
  remote file with ``if_version``.
- both changed: a deletion on one side loses to the edit on the other; two edits are merged when
  both only added lines (merge.py), else ours wins and R is kept whole under ``.conflict/``.
A failed precondition means the remote moved while we looked: read it again and decide again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import DamagedNote
from ..stores import AuthFailed, Entry, PreconditionFailed, Store, StoreError, StoreNotFound, Unreachable
from ..vault import atomic_write, inside_vault
from . import merge
from .state import Known, SyncState, digest

Progress = Callable[[int, int], None]
TRIES = 6  # reads-and-decides of one file before it is left for the next sync
CONFLICT_FOLDER = ".conflict"
_SKIP_NAMES = {".DS_Store", "Thumbs.db", "desktop.ini", ".git"}


@dataclass
class SyncReport:
    pulled: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "path: reason", left for the next sync
    outbox: int = 0
    requests: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "pulled": self.pulled,
            "pushed": self.pushed,
            "deleted": self.deleted,
            "conflicts": self.conflicts,
            "merged": self.merged,
            "failed": self.failed,
            "outbox": self.outbox,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
        }


def syncable(path: str) -> bool:
    """False for what never syncs: temp files of atomic writes, lock files, OS litter, git."""
    parts = path.split("/")
    name = parts[-1]
    if any(part in _SKIP_NAMES for part in parts):
        return False
    if name.startswith(".") and name.endswith(".tmp"):
        return False
    if name.endswith(".lock") or name.startswith(".~lock."):
        return False
    return not (parts[0] == ".obsidian" and name.startswith("workspace"))


def scan_local(vault: Path) -> dict[str, tuple[int, int]]:
    """Every syncable regular file in the vault: path -> (size, mtime_ns); links are not followed."""
    found: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(vault):
        rel_root = os.path.relpath(root, vault)
        prefix = "" if rel_root == "." else rel_root.replace(os.sep, "/") + "/"
        dirs[:] = [d for d in dirs if d not in _SKIP_NAMES and not os.path.islink(os.path.join(root, d))]
        for name in files:
            rel = prefix + name
            if not syncable(rel):
                continue
            try:
                rel.encode("utf-8")
                st = os.lstat(os.path.join(root, name))
            except (UnicodeEncodeError, OSError):
                continue
            if stat.S_ISREG(st.st_mode):
                found[rel] = (st.st_size, st.st_mtime_ns)
    return found


def conflict_files(vault: Path) -> list[str]:
    """The conflict copies in the vault (vault-relative), oldest name first."""
    root = vault / CONFLICT_FOLDER
    if not root.is_dir():
        return []
    return sorted(p.relative_to(vault).as_posix() for p in root.rglob("*") if p.is_file())


class Syncer:
    def __init__(self, vault: Path, state: SyncState, store: Store, *, origin: str, remote_url: str) -> None:
        self.vault = vault
        self.state = state
        self.store = store
        self.origin = origin
        self.remote_url = remote_url

    # -- one run -------------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> SyncReport:
        report = SyncReport()
        started, first_request = time.monotonic(), self.store.requests
        self.state.reset_for(self.remote_url)
        try:
            listed = {e.path: e for e in self.store.list("") if syncable(e.path)}
            local = scan_local(self.vault)
            queued = {entry.path: entry.seq for entry in self.state.outbox.entries()}
            todo: list[tuple[int, int, str]] = []
            for path in set(listed) | set(local) | set(self.state.files):
                if not syncable(path):
                    continue
                known, entry = self.state.files.get(path), listed.get(path)
                remote_changed = (
                    entry is not None if known is None else entry is None or entry.version != known.version
                )
                local_changed = (
                    known is not None if path not in local else self._local_changed(path, local[path])
                )
                if remote_changed or local_changed:
                    # Pulls first, then pushes in the order they were queued, then the rest.
                    rank = 0 if not local_changed else 1 if path in queued else 2
                    todo.append((rank, queued.get(path, 0), path))
            todo.sort()
            for done, (_rank, _seq, path) in enumerate(todo, 1):
                try:
                    self._reconcile(path, listed.get(path), report)
                except (AuthFailed, Unreachable):
                    raise
                except (StoreError, OSError) as exc:
                    # This file only: the others go on; the next sync looks at it again.
                    report.failed.append(f"{path}: {getattr(exc, 'message', None) or exc}")
                if progress:
                    progress(done, len(todo))
            for copy in list(report.conflicts):  # the other devices see a conflict copy at once
                try:
                    self._reconcile(copy, None, report)
                except (AuthFailed, Unreachable):
                    raise
                except (StoreError, OSError) as exc:
                    report.failed.append(f"{copy}: {getattr(exc, 'message', None) or exc}")
            unsettled = {line.split(": ", 1)[0] for line in report.failed}
            for entry in self.state.outbox.entries():
                if entry.path not in unsettled:
                    self.state.outbox.remove(entry)
            self.state.last_sync = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
        finally:
            self.state.save()
            report.outbox = len(self.state.outbox)
            report.requests = self.store.requests - first_request
            report.seconds = time.monotonic() - started
        with contextlib.suppress(OSError):
            self.state.prune_bases()
        return report

    def _reconcile(self, path: str, listed: Entry | None, report: SyncReport) -> None:
        """Bring one file into agreement; on a race, read again and decide again."""
        trust_listing = True
        for _ in range(TRIES):
            known = self.state.files.get(path)
            base = self.state.base(path) if known else None
            local, local_stat = self._read_local(path)
            remote, version = self._remote(
                path, listed if trust_listing else None, known, base, trust_listing
            )
            trust_listing = False
            try:
                if self._decide(path, base, local, local_stat, remote, version, report):
                    return
            except PreconditionFailed:
                continue
        raise PreconditionFailed(f"the remote copy kept changing during {TRIES} tries")

    def _remote(
        self, path: str, listed: Entry | None, known: Known | None, base: bytes | None, trusting: bool
    ) -> tuple[bytes | None, str | None]:
        """The remote's bytes and version. The first look may trust this run's listing where it
        tells the bytes exactly (same version as the base, or no file) and the store enforces
        ``if_version`` itself; any later look reads the file."""
        if trusting and self.store.native_cas:
            if listed is None:
                return None, None
            if known is not None and base is not None and listed.version == known.version:
                return base, listed.version
        try:
            blob = self.store.read(path)
        except StoreNotFound:
            return None, None
        return blob.data, blob.version

    def _decide(
        self,
        path: str,
        base: bytes | None,
        local: bytes | None,
        local_stat: tuple[int, int] | None,
        remote: bytes | None,
        version: str | None,
        report: SyncReport,
    ) -> bool:
        """Do what this file needs; True when done, False to look again (the local file moved)."""
        bh, lh, rh = (None if b is None else digest(b) for b in (base, local, remote))
        local_changed, remote_changed = lh != bh, rh != bh
        if lh == rh:  # nothing to move (both unchanged, or both changed alike)
            self._remember(path, remote, version, local_stat)
            return True
        if not local_changed:  # only the remote changed: take it
            if not self._replace_local(path, lh, remote):
                return False
            (report.pulled if remote is not None else report.deleted).append(path)
            self._remember(path, remote, version, self._read_local(path)[1])
            return True
        if not remote_changed and local is None:  # deleted here, unchanged there
            self.store.delete(path, if_version=version)
            report.deleted.append(path)
            self._remember(path, None, None, None)
            return True
        if not remote_changed or remote is None:  # changed here only, or edited here and deleted there
            assert local is not None
            self._push(path, local, version, local_stat, report)
            return True
        if local is None:  # deleted here, edited there: the edit stays
            if not self._replace_local(path, lh, remote):
                return False
            report.pulled.append(path)
            self._remember(path, remote, version, self._read_local(path)[1])
            return True
        merged = self._merge(path, base, local, remote)
        if merged is not None:
            if merged != local:
                if not self._replace_local(path, lh, merged):
                    return False
                local_stat = self._read_local(path)[1]
            self._push(path, merged, version, local_stat, report)
            report.merged.append(path)
            return True
        copy = self._keep_conflict(path, remote)
        report.conflicts.append(copy)
        self._push(path, local, version, local_stat, report)
        return True

    def _push(
        self,
        path: str,
        data: bytes,
        version: str | None,
        local_stat: tuple[int, int] | None,
        report: SyncReport,
    ) -> None:
        if version is None:
            new_version = self.store.write(path, data, create_only=True)
        else:
            new_version = self.store.write(path, data, if_version=version)
        if not self.store.native_cas:
            # The store checked, then wrote: someone may have written in between. Look again.
            blob = self.store.read(path)
            if digest(blob.data) != digest(data):
                raise PreconditionFailed(f"{path} changed on the remote while it was written")
            new_version = blob.version
        report.pushed.append(path)
        self._remember(path, data, new_version, local_stat)

    def _merge(self, path: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
        """The union of two additions, or None: not text, not a note that parses (damaged files
        go byte for byte), or more than added lines."""
        if not path.endswith(".md"):
            return None
        texts = []
        for data in (base or b"", ours, theirs):
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                return None
        if not (_parses(ours) and _parses(theirs)):
            return None
        merged = merge.merge(*texts)
        if merged is None or not _parses(merged.encode("utf-8")):
            return None
        return merged.encode("utf-8")

    def _keep_conflict(self, path: str, data: bytes) -> str:
        """Save the remote's version whole at ``.conflict/<path>__<origin>__<time>.md``."""
        stem, dot, ext = path.rpartition(".")
        if not dot or "/" in ext:
            stem, ext = path, ""
        origin = _origin_of(data) or "remote"
        moment = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        base_name = f"{CONFLICT_FOLDER}/{stem}__{origin}__{moment}"
        rel, n = f"{base_name}.{ext}" if ext else base_name, 1
        while (self.vault / rel).exists():
            n += 1
            rel = f"{base_name}-{n}.{ext}" if ext else f"{base_name}-{n}"
        target = self.vault / rel
        if not inside_vault(self.vault, target):
            raise OSError(f"{rel} would be written through a link")
        atomic_write(target, data)
        return rel

    # -- local files ---------------------------------------------------------------------------

    def _local_changed(self, path: str, stamp: tuple[int, int]) -> bool:
        return local_changed(self.vault, self.state, path, stamp)

    def _read_local(self, path: str) -> tuple[bytes | None, tuple[int, int] | None]:
        return read_local(self.vault, path)

    def _replace_local(self, path: str, expected: str | None, data: bytes | None) -> bool:
        """Put ``data`` at ``path`` (None: remove it), if the file still holds the bytes with
        hash ``expected`` (None: no file). False when it changed since: decide again."""
        target = self.vault / path
        if not inside_vault(self.vault, target) or any(p in ("", ".", "..") for p in path.split("/")):
            raise OSError(f"{path}: not a place inside the vault")
        current = self._read_local(path)[0]
        if (None if current is None else digest(current)) != expected:
            return False
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        else:
            atomic_write(target, data)
        return True

    def _remember(
        self, path: str, data: bytes | None, version: str | None, local_stat: tuple[int, int] | None
    ) -> None:
        if data is None or version is None:
            self.state.files.pop(path, None)
            return
        size, mtime_ns = local_stat if local_stat is not None else (-1, 0)
        self.state.files[path] = Known(version, self.state.put_base(data), size, mtime_ns, time.time())


def _parses(data: bytes) -> bool:
    from ..notefile import load_note

    try:
        load_note("user/probe.md", data)
    except DamagedNote:
        return False
    return True


def _origin_of(data: bytes) -> str | None:
    """The ``origin`` a note's front matter names, as a safe file-name part."""
    import re

    try:
        head = data[:4096].decode("utf-8", errors="replace")
    except ValueError:
        return None
    match = re.search(r"^origin:\s*['\"]?([^'\"\n]+)", head, re.MULTILINE)
    if not match:
        return None
    safe = re.sub(r"[^\w.-]+", "-", match.group(1).strip()).strip("-.")
    return safe[:40] or None


def local_changes(vault: Path, state: SyncState) -> list[str]:
    """Paths whose local file differs from the last synced copy (written, edited, deleted)."""
    local = scan_local(vault)
    changed = [p for p in sorted(local) if local_changed(vault, state, p, local[p])]
    changed += sorted(p for p in state.files if p not in local and syncable(p))
    return changed


def queue_local_changes(vault: Path, state: SyncState) -> int:
    """Put every local change in the outbox (durably) before the remote is tried; the count."""
    for path in local_changes(vault, state):
        data = read_local(vault, path)[0]
        state.outbox.put(path, None if data is None else digest(data))
    return len(state.outbox)


def local_changed(vault: Path, state: SyncState, path: str, stamp: tuple[int, int]) -> bool:
    known = state.files.get(path)
    if known is None:
        return True
    if known.stat_matches(*stamp):
        return False
    data, now_stat = read_local(vault, path)
    if data is None:
        return True
    if digest(data) != known.digest:
        return True
    if now_stat is not None:  # same bytes, new mtime (touched): skip the hash next time
        known.size, known.mtime_ns, known.at = now_stat[0], now_stat[1], time.time()
    return False


def read_local(vault: Path, path: str) -> tuple[bytes | None, tuple[int, int] | None]:
    """The local file's bytes and the (size, mtime) they were read at (None if it changed while
    read); (None, None) when there is no regular file there."""
    from ..errors import NotFound
    from ..fileio import open_file  # no link followed on the way to the file either

    try:
        fd = open_file(vault, path)
    except (NotFound, OSError):
        return None, None
    with open(fd, "rb") as handle:
        before = os.fstat(handle.fileno())
        if not stat.S_ISREG(before.st_mode):
            return None, None
        data = handle.read()
        after = os.fstat(handle.fileno())
    steady = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
    return data, (after.st_size, after.st_mtime_ns) if steady else None
