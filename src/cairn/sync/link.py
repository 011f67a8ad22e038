"""A vault's tie to its remote, as ``Memory`` uses it: when to sync, and what a failed sync means
for the call that caused it.

Memory holds its writer lock around every method here that touches files. A sync run after a
write or on open never fails the call: an unreachable remote leaves the change in the outbox
(said once on the ``cairn.sync`` logger, which a command line prints on stderr), a refused
credential says how to renew it, and local work goes on. ``Memory.sync()`` raises instead.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CairnError
from . import remotes

if TYPE_CHECKING:
    from ..stores import Store
    from .syncer import Progress, Syncer, SyncReport


def _warn(message: str, *args: object) -> None:
    import logging  # here: a vault without a remote never needs it (~2 ms at every start)

    logging.getLogger("cairn.sync").warning(message, *args)


DEFAULT_INTERVAL = 300.0
#: False while a caller opens a vault only to sync it (``cairn sync``): one run, reported whole.
sync_on_open: contextvars.ContextVar[bool] = contextvars.ContextVar("cairn_sync_on_open", default=True)


def renew_hint(url: str) -> str:
    return f"cairn remote set {remotes.mask_url(url)} --password-stdin (or --token-stdin)"


class RemoteLink:
    def __init__(
        self, vault: Path, home: Path, remote: remotes.Remote, *, origin: str, interval: float
    ) -> None:
        from .state import SyncState

        self.vault = vault
        self.home = home
        self.remote = remote
        self.origin = origin
        self.interval = interval
        self.state = SyncState(home, vault)
        self._store: Store | None = None
        self._syncer: Syncer | None = None
        self._last_try = 0.0  # monotonic time of the last attempt, failed or not
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def attach(
        cls, vault: Path, home: Path, *, origin: str, url: str | None, interval: float | None
    ) -> RemoteLink | None:
        """The vault's link, or None when it has no remote (nothing is imported or opened then).

        ``url`` is the remote of a mirror vault (``Memory.open(URL)``); credentials saved for the
        mirror, or the environment, go with it."""
        remote = remotes.load(home, vault)
        if url is not None:
            saved = remote if remote is not None and remote.url == url else None
            remote = remotes.with_env(saved or remotes.Remote(url=url))
        if remote is None:
            return None
        return cls(
            vault, home, remote, origin=origin, interval=DEFAULT_INTERVAL if interval is None else interval
        )

    # -- running ---------------------------------------------------------------------------------

    def syncer(self) -> Syncer:
        if self._syncer is None:
            from ..stores import open_store
            from .syncer import Syncer

            self._store = open_store(
                self.remote.url, user=self.remote.user, password=self.remote.password, token=self.remote.token
            )
            self._syncer = Syncer(
                self.vault, self.state, self._store, origin=self.origin, remote_url=self.remote.url
            )
        return self._syncer

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """One run; StoreError (AuthFailed, Unreachable) is raised with the renewal hint where due."""
        from ..stores import AuthFailed
        from .syncer import queue_local_changes

        self._last_try = time.monotonic()
        queue_local_changes(self.vault, self.state)  # first: durable even if the remote is down
        try:
            report = self.syncer().run(progress)
        except AuthFailed as exc:
            self.last_error = (
                f"the remote refused the credential: renew it with {renew_hint(self.remote.url)}"
            )
            raise AuthFailed(f"{self.last_error} ({exc.message})") from exc
        except CairnError as exc:
            self.last_error = exc.message
            raise
        self.last_error = None
        return report

    def sync_quietly(self, why: str) -> SyncReport | None:
        """A sync a call did not ask for (on open, after a write, when due): never raises a
        StoreError; says once what went wrong and what it means for local work."""
        from ..stores import AuthFailed, StoreError

        try:
            return self.sync()
        except AuthFailed as exc:
            _warn("cairn: sync stopped: %s; local work goes on", exc.message)
        except StoreError as exc:
            queued = len(self.state.outbox)
            tail = f"; {queued} change(s) queued in the outbox, sent at the next sync" if queued else ""
            _warn("cairn: remote not reached %s (%s)%s; the local vault is used", why, exc.message.rstrip("."), tail)
        return None

    def due(self) -> bool:
        return time.monotonic() - self._last_try >= self.interval

    # -- background (a running server) -----------------------------------------------------------

    def start_timer(self, run: Callable[[], object]) -> None:
        """Call ``run`` every ``interval`` seconds on a daemon thread until ``close``."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(max(1.0, self.interval)):
                try:
                    run()
                except CairnError as exc:  # said on the logger; the server keeps serving
                    _warn("cairn: background sync: %s", exc.message)

        self._thread = threading.Thread(target=loop, name="cairn-sync", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._store is not None:
            self._store.close()
            self._store = None
            self._syncer = None

    # -- status ----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        from .syncer import conflict_files

        return {
            "remote": remotes.mask_url(self.remote.url),
            "last_sync": self.state.last_sync,
            "outbox": len(self.state.outbox),
            "conflicts": conflict_files(self.vault),
            "sync_interval": self.interval,
            "last_error": self.last_error,
        }


def status_of(vault: Path, home: Path) -> dict[str, Any]:
    """Remote, last sync, outbox size and conflict copies of a vault, without opening it (for
    ``cairn status`` and ``cairn doctor``); ``remote`` is None when the vault has none."""
    from .state import SyncState
    from .syncer import conflict_files

    remote = remotes.load(home, vault)
    state = SyncState(home, vault)
    return {
        "remote": remotes.mask_url(remote.url) if remote else state.remote and remotes.mask_url(state.remote),
        "last_sync": state.last_sync,
        "outbox": len(state.outbox),
        "conflicts": conflict_files(vault),
    }
