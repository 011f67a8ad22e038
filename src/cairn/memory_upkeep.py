"""Looking after the index and the vault: refresh, reindex, doctor, status."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import maintenance
from .mending import mends_index as _mends_index
from .models import (
    DoctorReport,
    RefreshReport,
)

Progress = Callable[[int, int], None]  # (done, total)


class UpkeepMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    @_mends_index
    def refresh(self, *, verify: bool = True) -> RefreshReport:
        """Bring the index up to date with the files (only changed files are parsed). With
        ``verify`` (``cairn refresh``) it also hashes the files whose size and mtime did not
        change, to catch a sync client that rewrote one in place; without, it compares sizes and
        mtimes only, as every call does before it runs (docs/freshness.md)."""
        with self._lock:
            self._vault_exists()
            return self._fresh.sync(full=True, verify=verify)

    @_mends_index
    def reindex(self, progress: Progress | None = None) -> RefreshReport:
        """Drop the index and rebuild it from the files (and give back the space an index that
        had grown larger no longer needs)."""
        with self._lock:
            self._vault_exists()
            return maintenance.reindex(self, progress)

    @_mends_index
    def doctor(self) -> DoctorReport:
        """Damaged files (with the reason; also files whose names are not UTF-8, which are not
        indexed), duplicate permalinks, unresolved relations, trash size, in the scopes this caller
        may touch; ``warnings``: notes indexed only in part, notes both live and in the trash
        (a copy left by an interrupted delete is removed)."""
        with self._lock:
            self._vault_exists()
            return maintenance.doctor(self)

    @_mends_index
    def status(self) -> dict[str, Any]:
        """Vault path, index path, scope, allowed scopes, counts (``damaged`` counts the files
        ``doctor`` lists), and how hand edits are seen: ``freshness`` is what a long-running
        process (``cairn serve``) uses here (``inotify`` events, or a ``scan``),
        ``freshness_now`` what this process uses, and ``freshness_why`` says why."""
        with self._lock:
            self._vault_exists()
            return maintenance.status(self)
