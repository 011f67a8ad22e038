"""Maintenance of a vault's index: rebuild it, check the vault's health, say how it is kept fresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import trash
from .freshness import unnamed_file
from .models import Damaged, DoctorReport, RefreshReport

if TYPE_CHECKING:
    from .memory import Memory

Progress = Callable[[int, int], None]  # (done, total)


def reindex(mem: Memory, progress: Progress | None) -> RefreshReport:
    """``Memory.reindex`` under its lock. The drop and the rebuild are one transaction, taken
    under the vault's write lock: until it commits, other processes read the index as it was
    (their catch-up gives way, ``freshness.CATCH_UP_WAIT_MS``), and their writes wait for it."""
    with mem._vault_lock.held():
        try:
            with mem._index.transaction():
                mem._index.reset()
                mem._fresh.stamps = {}
                report = mem._fresh.sync(progress, full=True)
        except BaseException:
            mem._fresh.load()  # the index as it was, rolled back
            raise
        mem._index.checkpoint()
        mem._index.compact()
    return report


def doctor(mem: Memory) -> DoctorReport:
    """``Memory.doctor`` under its lock."""
    skipped = mem._fresh.sync(full=True).skipped  # a full scan: every file passed over
    damaged = [Damaged(path, error) for path, error in mem._index.damaged(mem.allow_scopes)]
    warnings = [*mem._fresh.oversized(), *trash.settle(mem, mem.allow_scopes)]
    return DoctorReport(
        vault=str(mem.vault),
        index=str(mem.index_path),
        notes=mem._index.count(mem.allow_scopes),
        damaged=(*damaged, *skipped),
        duplicate_permalinks=tuple(mem._index.duplicate_permalinks(mem.allow_scopes)),
        unresolved_relations=mem._index.unresolved_count(mem.allow_scopes),
        trashed=trash.count(mem, mem.allow_scopes),
        warnings=tuple(warnings),
        unresolved=tuple(mem._index.unresolved(mem.allow_scopes)),
        conflicts=tuple(_conflict_files(mem.vault)),
    )


def status(mem: Memory) -> dict[str, Any]:
    """``Memory.status`` under its lock."""
    from .watch import inotify_available

    mem._sync()
    from .sync import status_of

    remote = status_of(mem.vault, mem.home)
    unnamed = [p for p in mem._fresh.unnamed if mem._fresh.in_allowed_scope(p)]
    served = "inotify" if inotify_available() else "scan"
    now = "inotify" if mem._watcher is not None else "scan"
    if now == "inotify":
        why = "this process follows inotify events: a call looks only at the files they name"
    elif served == "inotify":
        why = (
            "a one-shot command starts no watcher (it would see no event before it ends): it compares "
            "every file's size and mtime with the index instead; a long-running `cairn serve` follows "
            "inotify events"
        )
    else:
        why = "no inotify here (or CAIRN_WATCH=0): every call compares each file's size and mtime"
    return {
        "vault": str(mem.vault),
        "home": str(mem.home),
        "index": str(mem.index_path),
        "scope": mem.scope,
        "allow_scopes": list(mem.allow_scopes),
        "notes": mem._index.count(mem.allow_scopes),
        "damaged": len(mem._index.damaged(mem.allow_scopes)) + len([unnamed_file(p) for p in unnamed]),
        "timezone": str(mem.tz),
        "freshness": served,
        "freshness_now": now,
        "freshness_why": why,
        **(
            {"remote": remote["remote"], "last_sync": remote["last_sync"], "outbox": remote["outbox"]}
            if remote["remote"]
            else {}
        ),
        **({"conflicts": len(remote["conflicts"])} if remote["conflicts"] else {}),
    }


def _conflict_files(vault: Any) -> list[str]:
    from .sync.syncer import conflict_files  # only doctor needs the sync modules

    return conflict_files(vault)
