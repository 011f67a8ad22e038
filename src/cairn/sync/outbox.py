"""The outbox: local changes waiting for the remote, durable and in the order they were made.

One JSON file per entry under ``<home>/sync/<vault-id>/outbox/``, named by a sequence number so
a listing is the order; each is written to a temp file, fsynced and renamed, so a crash leaves
an entry whole or absent. An entry names the file and the content hash it was queued at; the
file itself stays in the vault (the working copy), so draining pushes whatever the file holds
then, and a later entry for the same file is folded into the first.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..vault import atomic_write


@dataclass(frozen=True)
class Entry:
    seq: int
    path: str  # vault-relative
    digest: str | None  # the content hash when queued; None for a deletion
    queued: float

    @property
    def file_name(self) -> str:
        return f"{self.seq:012d}.json"


class Outbox:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def entries(self) -> list[Entry]:
        """Every queued entry, oldest first (unreadable leftovers are passed over)."""
        try:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(".json") and n[:12].isdigit())
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            try:
                data = json.loads((self.folder / name).read_text(encoding="utf-8"))
                found.append(
                    Entry(int(name[:12]), str(data["path"]), data.get("digest"), float(data["queued"]))
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return found

    def __len__(self) -> int:
        return len(self.entries())

    def put(self, path: str, digest: str | None) -> Entry | None:
        """Queue ``path`` (at ``digest``); None when an entry for that path is already waiting."""
        entries = self.entries()
        if any(entry.path == path for entry in entries):
            return None
        seq = (entries[-1].seq + 1) if entries else 1
        entry = Entry(seq, path, digest, time.time())
        data = {"path": path, "digest": digest, "queued": entry.queued}
        atomic_write(self.folder / entry.file_name, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        return entry

    def remove(self, entry: Entry) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / entry.file_name).unlink()
