"""What every ``Memory`` call does about the index: say so in one line when it is busy or cannot
be written, and run the call again on a fresh index when SQLite finds the file damaged."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import apsw

from .errors import Busy, IndexUnavailable
from .index import BUSY as BUSY_INDEX
from .index import DAMAGED as DAMAGED_INDEX
from .index import UNWRITABLE as UNWRITABLE_INDEX

_T = TypeVar("_T")
_P = ParamSpec("_P")


@contextlib.contextmanager
def busy_is_an_error(index_path: Path | None = None) -> Iterator[None]:
    """Say so when another process keeps the index locked past the wait: a person can run the
    command again once, say, that process's reindex is done. So too, in one line, when the index
    cannot be opened or written (``index.UNWRITABLE``)."""
    try:
        yield
    except BUSY_INDEX as exc:
        raise Busy("the index is in use by another process: try again when it is done") from exc
    except UNWRITABLE_INDEX as exc:
        raise _unavailable(index_path, exc) from exc


def _unavailable(index_path: Path | None, exc: Exception) -> IndexUnavailable:
    where = str(index_path) if index_path else "the index"
    if index_path is not None and index_path.is_dir():
        why = "that path is a folder, not a file: remove or move it"
    elif isinstance(exc, apsw.FullError) or "full" in str(exc):
        why = "the disk is full"
    else:
        why = "the file or its folder cannot be written (read-only, immutable or not ours)"
    return IndexUnavailable(
        f"cannot use the index {where}: {why}; nothing was written. The index is only a cache of the "
        "notes: once it can be written it recovers by itself (or set CAIRN_HOME to another place)"
    )


def mends_index(method: Callable[Concatenate[Any, _P], _T]) -> Callable[Concatenate[Any, _P], _T]:
    """Run ``method`` again on a new index if SQLite finds the index file damaged: it is only a
    cache, rebuilt from the files by the next scan. Safe for the methods that write a file too:
    once one is written, damage is absorbed where the index is told (``_index_written``), so
    what reaches this retry happened before anything was written."""

    @functools.wraps(method)
    def mended(self: Any, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        self._remote_if_due()  # a remote not synced for sync_interval is synced first
        with busy_is_an_error(self.index_path):
            if self._reopen:
                with self._lock:
                    self._index.reopen()
                    self._reopen = False
                    self._fresh.load()
            try:
                try:
                    return method(self, *args, **kwargs)
                except DAMAGED_INDEX:
                    with self._lock:
                        self._replace_index()
                    return method(self, *args, **kwargs)
            except UNWRITABLE_INDEX:
                self._reopen = True  # SQLite keeps the connection read-only: open it again next time
                raise

    return mended
