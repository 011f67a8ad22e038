"""Freshness: the index catching up with the files before every call (docs/freshness.md).

A file is looked at again when its size or mtime differ from what the index holds (or inotify
says it changed); its bytes are then hashed, and parsed only when the hash differs. An explicit
``refresh`` also hashes the files whose size and mtime did not change: sync clients set mtimes,
and an edit that keeps both is seen only so.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import records
from .index import BUSY, DAMAGED, UNWRITABLE, Index
from .models import Damaged, RefreshReport
from .vault import FileStat, folder_scope, generated_file, scan_notes, utf8_name

if TYPE_CHECKING:
    from .watch import Watcher

Progress = Callable[[int, int], None]  # (done, total)

CHECKPOINT_AFTER = 500  # files re-indexed in one go after which the WAL is folded back
# A catch-up that finds the index held by another process (a long reindex) waits this long, then
# answers from the index as it was: the files that changed are looked at again at the next call.
CATCH_UP_WAIT_MS = 1000
# A file this fresh may change again within the same mtime tick, so it is hashed again at the next
# scan. File systems that keep whole seconds (FAT: two) need seconds; where an mtime has digits
# below the second, the tick is 15.6 ms at the coarsest (Windows), and 0.1 s leaves a wide margin.
_RACY_SECONDS = 2.0
_RACY_SECONDS_FINE = 0.1


class Freshness:
    """What the index holds of each file, and the catch-up with the files."""

    def __init__(
        self, vault: Path, index: Index, tz: object, allow_scopes: tuple[str, ...], watcher: Watcher | None
    ) -> None:
        self.vault = vault
        self.index = index
        self.tz = tz
        self.allow_scopes = allow_scopes
        self.watcher = watcher
        # What the index holds of each file: (size, mtime) to spot a change. The hash that
        # confirms one is read for the changed files only: held for every file, it cost 37 ms
        # and 16 MB at 100k notes in every command.
        self.stamps: dict[str, tuple[int, int]] = {}
        # Files whose names are not UTF-8: never indexed, so kept here for status and doctor.
        self.unnamed: set[str] = set()
        self.needs_scan = True
        self.swept: dict[Path, float] = {}  # folder -> when its leftover temp files were removed

    def load(self) -> None:
        self.stamps = self.index.file_stamps()

    def forget_all(self) -> None:
        """The index was replaced by an empty one: the next scan indexes every file."""
        self.stamps = {}
        self.needs_scan = True

    def index_written(
        self, change: Callable[[], None], rel: str, size: int | None, mtime_ns: int | None
    ) -> bool:
        """Apply ``change`` to the index for the file at ``rel`` just written (``size`` None: just
        removed). False when the index could not take it now (damaged: replaced; held by another
        process; not writable): the file is written, and the next scan indexes it."""
        try:
            with self.index.transaction():
                change()
        except DAMAGED:
            self.index.replace()
            self.forget_all()
            return False
        except (BUSY, *UNWRITABLE):
            self.needs_scan = True
            self.stamps.pop(rel, None)
            return False
        if size is None or mtime_ns is None:
            self.stamps.pop(rel, None)
        else:
            self.stamps[rel] = (size, mtime_ns)
        return True

    def sync(
        self, progress: Progress | None = None, *, full: bool = False, verify: bool = False
    ) -> RefreshReport:
        """Catch the index up with the files; parse only what changed.

        With a watcher, only the files it saw change are checked; otherwise (or when asked, or
        when the watcher lost track) every file's size and mtime is compared with the index.
        ``verify`` also hashes the files whose size and mtime match (an explicit refresh).
        """
        notices = None if full or verify or self.watcher is None else self.watcher.changes()
        whole = notices is None or self.needs_scan
        if whole:
            self.needs_scan = False
            seen = scan_notes(self.vault)
            removed = sorted(self.stamps.keys() - seen.keys())
        else:
            seen, removed = self.stat_paths(notices)
        known = self.stamps.get
        changed = sorted(path for path, stamp in seen.items() if known(path) != stamp)
        if verify:
            changed = sorted([*changed, *self._rewritten_in_place(seen)])
        # A name that is not UTF-8 can be neither stored nor shown as it is: never indexed, such a
        # file is "changed" at every look, so checking only changed paths finds every one.
        unnamed = [path for path in changed if not utf8_name(path)]
        if whole:  # every unnamed file was among the changed
            self.unnamed = set(unnamed)
        else:
            self.unnamed = (self.unnamed - set(notices or ())) | set(unnamed)
        if unnamed:
            for path in unnamed:
                del seen[path]
            changed = [path for path in changed if utf8_name(path)]
        skipped = tuple(unnamed_file(path) for path in unnamed if self.in_allowed_scope(path))
        unchanged = len(seen) - len(changed)
        if not changed and not removed:
            return RefreshReport(scanned=len(seen), unchanged=unchanged, skipped=skipped)
        if not self.index.in_transaction:
            try:  # a long reindex elsewhere holds the index: answer from it as it was
                with self.index.waiting(CATCH_UP_WAIT_MS), self.index.transaction():
                    return self._catch_up(seen, changed, removed, unchanged, skipped, progress)
            except (BUSY, *UNWRITABLE):  # a read-only index too: reads go on from it as it is
                self.needs_scan = True
                return RefreshReport(scanned=len(seen), unchanged=len(seen), skipped=skipped)
        return self._catch_up(seen, changed, removed, unchanged, skipped, progress)

    def _rewritten_in_place(self, seen: dict[str, tuple[int, int]]) -> list[str]:
        """The files whose size and mtime match the index but whose bytes do not (a sync client
        that sets mtimes): each is read and hashed here, in this process; none is parsed."""
        same = [path for path, stamp in seen.items() if self.stamps.get(path) == stamp and utf8_name(path)]
        digests = self.index.digests_of(same)
        found = []
        for path in same:
            st = FileStat(path, *seen[path])
            record = records.read_record(self.vault, st, st.mtime_ns, self.tz, digests.get(path))
            if record is None or record.digest != digests.get(path):
                found.append(path)
        return found

    def _catch_up(
        self,
        seen: dict[str, tuple[int, int]],
        changed: list[str],
        removed: list[str],
        unchanged: int,
        skipped: tuple[Damaged, ...],
        progress: Progress | None,
    ) -> RefreshReport:
        added = updated = 0
        digests = self.index.digests_of([path for path in changed if path in self.stamps])
        work = [
            (st, trusted_mtime(st), digests.get(st.path))
            for st in (FileStat(path, *seen[path]) for path in changed)
        ]
        # Counting notes per token costs ~0.15 ms a file, recounting them all ~0.03 ms a note: worth
        # it for a first build or a large import. (Files merely touched are "changed" here too.)
        recount = 4 * sum(path not in self.stamps for path in changed) > len(self.stamps)
        stamps = dict(self.stamps)  # kept only once the transaction commits
        with self.index.batch(recount=recount) as batch:
            for done, record in enumerate(records.read_records(self.vault, work, self.tz), 1):  # type: ignore[arg-type]
                path, size = changed[done - 1], seen[changed[done - 1]][0]
                known = digests.get(path)
                if record is None:  # gone since the scan (or now a link, which is not followed)
                    removed.append(path)
                    continue
                if known == record.digest:
                    if stamps.get(path) != (size, record.mtime_ns):
                        self.index.touch(path, size, record.mtime_ns)
                    unchanged += 1
                else:
                    batch.insert(record)
                    added, updated = (added + 1, updated) if known is None else (added, updated + 1)
                stamps[path] = (size, record.mtime_ns)
                if progress:
                    progress(done, len(changed))
            for path in removed:
                batch.remove(path)
                stamps.pop(path, None)
        self.stamps = stamps
        if added + updated + len(removed) >= CHECKPOINT_AFTER and not self.index.in_transaction:
            self.index.checkpoint()
        damaged = tuple(Damaged(p, e) for p, e in self.index.damaged(self.allow_scopes))
        return RefreshReport(len(seen), added, updated, len(removed), unchanged, damaged, skipped)

    def in_allowed_scope(self, path: str) -> bool:
        return folder_scope(path.partition("/")[0]) in self.allow_scopes

    def stat_paths(self, paths: set[str]) -> tuple[dict[str, tuple[int, int]], list[str]]:
        stats: dict[str, tuple[int, int]] = {}
        removed: list[str] = []
        for path in sorted(paths):
            if folder_scope(path.partition("/")[0]) is None or generated_file(path):
                continue
            try:
                st = os.stat(self.vault / path, follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                if path in self.stamps:
                    removed.append(path)
                continue
            if stat.S_ISREG(st.st_mode):
                stats[path] = (st.st_size, st.st_mtime_ns)
            elif path in self.stamps:  # now a link or a folder: no longer a note, as a scan finds
                removed.append(path)
        return stats, removed

    def oversized(self) -> list[Damaged]:
        """Notes indexed only in part: larger than ``records.MAX_INDEXED_BYTES``."""
        cap = records.MAX_INDEXED_BYTES
        return [
            Damaged(
                path,
                f"{size / 1048576:.1f} MiB: only its first {cap // 1048576} MiB are indexed and searched; "
                "split it into smaller notes",
            )
            for path, (size, _) in sorted(self.stamps.items())
            if size > cap and self.in_allowed_scope(path)
        ]


def unnamed_file(path: str) -> Damaged:
    """A file whose name is not UTF-8, named with its bytes escaped (``caf\\xe9.md``)."""
    shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return Damaged(shown, "the file name is not UTF-8, so the note is not indexed: rename the file")


def watching_wanted() -> bool:
    """``CAIRN_WATCH=0`` turns inotify off (e.g. a vault on a network share, where the kernel
    never hears of changes made on other machines): every call then scans."""
    return os.environ.get("CAIRN_WATCH", "1").strip().lower() not in ("0", "false", "no", "off")


def trusted_mtime(st: FileStat) -> int:
    """The mtime to remember, or -1 when the file is so fresh that a same-tick change could hide."""
    window = _RACY_SECONDS if st.mtime_ns % 1_000_000_000 == 0 else _RACY_SECONDS_FINE
    return -1 if time.time() - st.mtime_ns / 1e9 < window else st.mtime_ns
