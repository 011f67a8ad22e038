"""The remote-sync calls of ``Memory`` (issue 34); logic in ``cairn.sync``. Everything sync needs
from Memory is here: the mirror of a URL, syncing on open, after each write and when due."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..index import BUSY, DAMAGED, UNWRITABLE

if TYPE_CHECKING:
    from ..vault import VaultConfig
    from . import RemoteLink
    from .syncer import SyncReport

Progress = Callable[[int, int], None]  # (done, total)


class SyncMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    _remote: RemoteLink | None = None
    _remote_busy = False  # a sync is running in the thread holding the lock: do not start another

    @staticmethod
    def _mirror_of(vault: str | Path | None, home: Path) -> tuple[str | Path | None, str | None]:
        """``(vault, None)``, or for a remote URL ``(its mirror folder, the URL)``."""
        from . import remotes

        url = remotes.as_url(vault)
        if url is None:
            return vault, None
        return remotes.mirror_folder(home, url), url

    def _attach_remote(self, url: str | None, config: VaultConfig) -> None:
        from . import RemoteLink
        from .link import sync_on_open

        try:
            interval = config.sync_interval
            self._remote = RemoteLink.attach(
                self.vault, self.home, origin=self.origin, url=url, interval=interval
            )
            if self._remote is not None and sync_on_open.get():
                with self._remote_locked():
                    self._remote.sync_quietly("on open")
        except BaseException:
            self.close()
            raise

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Pull what changed on the remote, push what changed here (merging where both did).

        Raises:
            InvalidInput: the vault has no remote (``cairn remote set URL``).
            AuthFailed: the remote refused the credential (the message says how to renew it).
            Unreachable: the remote could not be reached; local changes stay in the outbox.
        """
        if self._remote is None:
            raise InvalidInput("this vault has no remote: attach one with cairn remote set URL")
        with self._remote_locked():
            return self._remote.sync(progress)

    def sync_status(self) -> dict[str, Any] | None:
        """The remote (password masked), the last sync, the outbox size and the conflict copies;
        None when the vault has no remote."""
        return None if self._remote is None else self._remote.status()

    def conflicts(self, *, texts: bool = True) -> list[dict[str, Any]]:
        """The ``.conflict/`` copies a sync left, each beside its live file (``conflicts.listing``);
        works with or without a remote."""
        from . import conflicts

        return conflicts.listing(self, texts=texts)

    def resolve_conflict(
        self, path: str, keep: str = "mine", text: str | None = None, *, if_version: str | None = None
    ) -> dict[str, Any]:
        """Settle the conflict copy at ``path`` and remove it: keep ``mine`` (the live file),
        ``theirs`` (the copy's text) or ``merged`` (``text``), the live file replaced only if it
        is still at ``if_version`` (``conflicts.resolve``).

        Raises:
            InvalidInput: a path outside ``.conflict/``, a bad ``keep``, ``merged`` without text.
            NotFound: no such copy, or the live file is gone.
            Conflict: the live file changed since ``if_version``; the copy is kept.
        """
        from . import conflicts

        return conflicts.resolve(self, path, keep, text, if_version=if_version)

    def start_background_sync(self) -> None:
        """Sync every ``sync_interval`` on a thread until ``close`` (a running server)."""
        if self._remote is not None:
            self._remote.start_timer(self._remote_if_due)

    @contextlib.contextmanager
    def _remote_locked(self) -> Iterator[None]:
        """The writer locks (as ``_writing`` takes them) around a sync, and the index caught up after."""
        with self._lock, self._vault_lock.held():
            self._remote_busy = True
            try:
                yield
            finally:
                self._remote_busy = False
            with contextlib.suppress(*DAMAGED, BUSY, *UNWRITABLE):
                self._sync()

    def _remote_after_write(self) -> None:
        """Called by ``_writing`` with the locks held, after a write succeeded."""
        if self._remote is None or self._remote_busy:
            return
        self._remote_busy = True
        try:
            self._remote.sync_quietly("after this write")
        finally:
            self._remote_busy = False

    def _remote_if_due(self) -> None:
        remote = self._remote
        if remote is None or self._remote_busy or not remote.due():
            return
        with self._remote_locked():
            if remote.due():  # another thread may have synced while this one waited
                remote.sync_quietly("before this call")

    def _detach_remote(self) -> None:
        if self._remote is not None:
            self._remote.close()
