"""What a vault last agreed on with its remote: per file, the remote's version and the bytes
(the merge base), kept in ``<home>/sync/<vault-id>/``, never in the vault.

    state.json        {"remote": url, "last_sync": iso, "files": {path: Known}}
    base/ab/abcd...   the last synced bytes of each file, by content hash (shared by equal files)
    outbox/           see outbox.py

Every file here is written atomically; losing ``state.json`` costs one slow sync (each file is
compared by content again), never a change.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..vault import atomic_write
from .outbox import Outbox
from .remotes import vault_id

RACY_SECONDS = 2.0  # a file whose mtime is this close to when it was hashed may change unseen


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Known:
    """One file as both sides held it after the last sync."""

    version: str  # the remote's version token
    digest: str  # sha256 of the bytes (the base copy)
    size: int = -1  # the local file's size and mtime when it held these bytes: skips a re-hash
    mtime_ns: int = 0
    at: float = 0.0  # when that stat was taken

    def stat_matches(self, size: int, mtime_ns: int) -> bool:
        return size == self.size and mtime_ns == self.mtime_ns and mtime_ns / 1e9 < self.at - RACY_SECONDS


class SyncState:
    def __init__(self, home: Path, vault: Path) -> None:
        self.folder = home / "sync" / vault_id(vault)
        self.outbox = Outbox(self.folder / "outbox")
        self.files: dict[str, Known] = {}
        self.remote: str | None = None
        self.last_sync: str | None = None
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads((self.folder / "state.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError, OSError):
            return
        if not isinstance(data, dict):
            return
        self.remote = data.get("remote") if isinstance(data.get("remote"), str) else None
        self.last_sync = data.get("last_sync") if isinstance(data.get("last_sync"), str) else None
        for path, item in (data.get("files") or {}).items():
            with contextlib.suppress(TypeError, KeyError, ValueError):
                self.files[path] = Known(
                    str(item["v"]), str(item["h"]), int(item["s"]), int(item["m"]), float(item["t"])
                )

    def save(self) -> None:
        data = {
            "remote": self.remote,
            "last_sync": self.last_sync,
            "files": {
                path: {"v": k.version, "h": k.digest, "s": k.size, "m": k.mtime_ns, "t": k.at}
                for path, k in sorted(self.files.items())
            },
        }
        atomic_write(self.folder / "state.json", json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def reset_for(self, remote: str) -> None:
        """Another remote than the one this state was kept for: start from nothing (the next
        sync compares every file by content, so nothing is lost)."""
        if self.remote != remote:
            self.files.clear()
            self.remote = remote

    # -- base copies -------------------------------------------------------------------------

    def _blob(self, hexdigest: str) -> Path:
        return self.folder / "base" / hexdigest[:2] / hexdigest

    def put_base(self, data: bytes) -> str:
        hexdigest = digest(data)
        path = self._blob(hexdigest)
        if not path.exists():
            atomic_write(path, data)
        return hexdigest

    def base(self, path: str) -> bytes | None:
        known = self.files.get(path)
        if known is None:
            return None
        try:
            data = self._blob(known.digest).read_bytes()
        except FileNotFoundError:
            return None
        return data if digest(data) == known.digest else None

    def prune_bases(self) -> None:
        """Drop base copies no file refers to any more."""
        wanted = {k.digest for k in self.files.values()}
        root = self.folder / "base"
        if not root.is_dir():
            return
        for sub in root.iterdir():
            for blob in sub.iterdir() if sub.is_dir() else ():
                if blob.name not in wanted and not blob.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(blob)
