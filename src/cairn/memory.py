"""The Memory service: the one engine that the CLI, the MCP server and the Python API call."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath

from . import fileio, index
from .errors import (
    InvalidInput,
    NotFound,
    ScopeDenied,
)
from .freshness import Freshness, watching_wanted
from .freshness import trusted_mtime as _trusted_mtime  # noqa: F401 - where tests have found it
from .governance.memory_methods import GovernanceMethods
from .governance.proposal_methods import ProposalMethods
from .index import DAMAGED as DAMAGED_INDEX
from .index import Index, Row
from .memory_reads import ReadMethods
from .memory_upkeep import UpkeepMethods
from .memory_writes import WriteMethods
from .mending import busy_is_an_error as _busy_is_an_error
from .models import (
    Note,
    RefreshReport,
)
from .notefile import load_note
from .portable.memory_methods import PortableMethods
from .sync.memory_methods import SyncMethods
from .vault import (
    VaultConfig,
    bare_permalink,
    folder_scope,
    load_config,
    parse_timezone,
    scope_folder,
    validate_scope,
)

# ``markdown`` (and PyYAML with it) is imported inside the methods that write: reads never need
# it, and a one-shot ``cairn search`` starts about 30 ms sooner without it.

Progress = Callable[[int, int], None]  # (done, total)

class Memory(
    ReadMethods, WriteMethods, UpkeepMethods, GovernanceMethods, ProposalMethods, PortableMethods, SyncMethods
):
    """A vault of Markdown notes and its rebuildable SQLite index.

    The calls are grouped by concept in the classes it is made of (reads, writes, upkeep,
    governance, proposals, portable, sync), each a thin layer over the module that holds that concept's logic;
    this class holds what they share: opening, the locks, scopes and the catch-up with the files.

    Open with ``Memory.open(path)``; use as a context manager or call ``close()``.
    Every call first notices changes made to the files by anyone (stat, then hash).
    """

    def __init__(
        self,
        vault: Path,
        home: Path,
        *,
        scope: str,
        allow_scopes: Sequence[str],
        origin: str,
        config: VaultConfig,
        watch: bool = True,
    ) -> None:
        self.vault = vault
        self.home = home
        self.scope = scope
        self.allow_scopes = tuple(dict.fromkeys(allow_scopes))
        self.origin = origin
        self.tz = parse_timezone(config.timezone)
        vault_id = hashlib.sha256(str(vault).encode()).hexdigest()[:16]
        self.index_path = index.index_file(home / "index", vault_id)
        # Shared by every process on this vault, whatever its home (see fileio).
        self._vault_lock = fileio.VaultLock(vault)
        self._lock = threading.RLock()
        self._reopen = False  # the index could not be written: open it again at the next call
        self._reads_need_vault = False
        with _busy_is_an_error(self.index_path):
            self._index = Index(self.index_path)
            self._fresh = Freshness(vault, self._index, self.tz, self.allow_scopes, None)
            try:
                self._fresh.load()
            except DAMAGED_INDEX:
                self._replace_index()
        with contextlib.suppress(OSError):  # only a cache: never a reason to fail
            index.remove_stale_versions(self.index_path.parent, vault_id)
        if watch:
            # imported here: only `cairn serve` watches; ctypes and friends cost ~20 ms per command
            from .watch import Watcher
        # Watch before the first scan, so that nothing changed in between goes unseen.
        self._watcher = Watcher.start(vault) if watch and watching_wanted() else None
        self._fresh.watcher = self._watcher

    @classmethod
    def open(
        cls,
        vault: str | Path | None = None,
        *,
        home: str | Path | None = None,
        scope: str | None = None,
        allow_scopes: Sequence[str] | None = None,
        origin: str | None = None,
        watch: bool = True,
        create: bool = True,
    ) -> Memory:
        """Open (creating if needed) the vault at ``vault``.

        Args:
            vault: vault folder; default ``$CAIRN_VAULT`` or ``<home>/vault``.
            home: state directory for the index and tokens; default ``$CAIRN_HOME`` or ``~/.cairn``.
            scope: default scope of calls that do not name one (``user``, ``agent:<id>``, ...);
                default the first allowed scope.
            allow_scopes: scopes this caller may touch; default from ``cairn.toml``, else
                ``["user"]``, plus ``scope`` when one is given.
            origin: name recorded in ``origin`` on every write (default: the host name).
            watch: follow changes through inotify where available (long-lived processes); a
                one-shot command scans once instead. ``CAIRN_WATCH=0`` also turns it off.
            create: make the vault folder now if it is missing (``cairn init``, and the default,
                as before). With ``create=False`` nothing is made until the first write, and
                a read of a vault that does not exist raises ``NotFound``.

        Raises:
            InvalidInput: a bad scope, a vault that is a file, a state directory inside the vault.
            IndexUnavailable: the index cannot be opened (a folder at its path, say).
        """
        home_path = (
            Path(home or os.environ.get("CAIRN_HOME") or Path.home() / ".cairn").expanduser().resolve()
        )
        vault, remote_url = cls._mirror_of(vault or os.environ.get("CAIRN_VAULT"), home_path)  # a URL: its mirror
        create = create or remote_url is not None  # a remote's mirror is Cairn's own folder to make
        vault_path = (
            Path(vault or os.environ.get("CAIRN_VAULT") or home_path / "vault").expanduser().resolve()
        )
        if vault_path.exists() and not vault_path.is_dir():
            raise InvalidInput(f"vault {vault_path} is a file, not a folder")
        if home_path == vault_path or vault_path in home_path.parents:
            raise InvalidInput(f"the state directory {home_path} must not be inside the vault {vault_path}")
        if scope is not None:
            validate_scope(scope)
        config = load_config(vault_path)  # a vault not made yet has no cairn.toml either
        if allow_scopes is None:
            # A cairn.toml allow-list confines every caller that names no scope of its own: the
            # default scope is then its first entry, never an unlisted "user".
            allow = list(config.allow_scopes if config.allow_scopes is not None else ("user",))
            if scope is not None:
                allow.append(scope)
        else:
            allow = [validate_scope(s) for s in allow_scopes]
            if scope is not None and scope not in allow:
                raise ScopeDenied(f"default scope {scope!r} is not among the allowed scopes {allow}")
        scope = scope if scope is not None else allow[0]  # every entry was validated
        allow = list(dict.fromkeys(allow))
        try:
            if create:
                (vault_path / scope_folder(scope)).mkdir(parents=True, exist_ok=True)
            home_path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInput(f"cannot create the vault at {vault_path}: {exc.strerror}") from exc
        memory = cls(
            vault_path,
            home_path,
            scope=scope,
            allow_scopes=allow,
            origin=origin or _hostname(),
            config=config,
            watch=watch,
        )
        memory._reads_need_vault = not create
        memory._attach_remote(remote_url, config)  # a vault with a remote syncs on open
        return memory

    def close(self) -> None:
        self._detach_remote()
        with self._lock:
            if self._watcher is not None:
                self._watcher.close()
            self._index.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------------

    # -- reads ----------------------------------------------------------------------------------

    # -- maintenance ----------------------------------------------------------------------------

    def _replace_index(self) -> None:
        """A new, empty index in place of a damaged one; the next scan indexes every file."""
        self._index.replace()
        self._fresh.forget_all()

    @property
    def indexed_files(self) -> int:
        """How many files the index holds (0 before the first scan of a new vault)."""
        return len(self._fresh.stamps)

    # -- internals ------------------------------------------------------------------------------

    def _vault_exists(self) -> None:
        """Reads never create a vault (``open(create=False)``): a mistyped path says so instead."""
        if self._reads_need_vault and not self.vault.is_dir():
            raise NotFound(f"no vault at {self.vault} (run: cairn --vault {self.vault} init)")

    def _scopes_allowed(self, scopes: Sequence[str]) -> tuple[str, ...]:
        checked = []
        for scope in scopes:
            validate_scope(scope)
            if scope not in self.allow_scopes:
                raise ScopeDenied(
                    f"scope {scope!r} is not allowed here; allowed: {', '.join(self.allow_scopes)}"
                )
            checked.append(scope)
        return tuple(dict.fromkeys(checked))

    def _read_scopes(self, scope: str | Sequence[str] | None) -> tuple[str, ...]:
        # Scopes are taken as given, as writes take them: " user" is refused, not trimmed.
        if scope is None or scope == "":
            return self._scopes_allowed([self.scope])
        if isinstance(scope, str):
            return self._scopes_allowed([s for s in scope.split(",") if s])
        if not scope:
            raise InvalidInput("scope list is empty")
        return self._scopes_allowed(list(scope))

    def _write_scope(self, scope: str | None) -> str:
        return self._scopes_allowed([scope or self.scope])[0]

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Serialise writers: threads through the RLock, every process on this vault through the
        vault's lock file (``fileio.VaultLock``). The index must take the write before a file
        changes: if it cannot, nothing is written."""
        with self._lock, self._vault_lock.held():
            self._index.check_writable()
            self._fresh.sync()
            yield
            self._remote_after_write()  # read-your-writes on the remote

    def _sync(self, progress: Progress | None = None, *, full: bool = False) -> RefreshReport:
        """Catch the index up with the files; parse only what changed (``Freshness.sync``)."""
        self._vault_exists()
        return self._fresh.sync(progress, full=full)

    def _load(self, rel: str) -> Note:
        """The note at ``rel``, read from one open of the file that follows no link."""
        data, st = fileio.read_file(self.vault, rel)
        return load_note(rel, data, mtime_ns=st.st_mtime_ns, tz=self.tz)

    def _resolve(self, identifier: str, scopes: Sequence[str]) -> Row:
        ident = bare_permalink(identifier)
        if not ident:
            raise InvalidInput("give a permalink, a memory:// URL, a title or a path")
        if ident.endswith(".md"):
            rel = PurePosixPath(ident.replace("\\", "/"))
            if rel.is_absolute() or ".." in rel.parts:
                raise InvalidInput(f"path {identifier!r} must be relative to the vault")
            # Check the scope before looking: a refusal must not tell whether the file exists.
            if folder_scope(rel.parts[0]) not in scopes:
                raise ScopeDenied(
                    f"{rel.as_posix()}: that scope is not allowed here; allowed: {', '.join(scopes)}"
                )
            row = self._index.row_by_path(rel.as_posix())
            if row is None:
                if (self.vault / rel).is_file():
                    self._load(rel.as_posix())  # a damaged file says why it cannot be read
                raise NotFound(f"no note at {rel.as_posix()}")
            return row
        rows = self._index.rows_by_permalink(scopes, ident) or self._index.rows_by_title(scopes, ident)
        if not rows:
            raise NotFound(
                f"no note with permalink or title {ident!r} in scope {', '.join(scopes)}; search for it first"
            )
        if len(rows) > 1:
            raise InvalidInput(
                f"{ident!r} names {len(rows)} notes: {', '.join(r.path for r in rows)}; "
                "use a path, or give each file its own permalink (cairn doctor lists duplicates)"
            )
        return rows[0]

    def _note_for_update(self, permalink: str, scope: str) -> Note:
        row = self._resolve(permalink, (scope,))
        return self._load(row.path)  # raises DamagedNote if it broke since it was indexed

    # -- governance (issue 35): inbox, projection, dream ---------------------------------------
    # Thin delegations to cairn.governance; the logic lives there. Kept as one block at the end
    # of the class so that the class can be split without touching it.

    # -- portable: export, import, journal (issue 36; logic in cairn.portable and cairn.journal) --

    # -- for the web panel (issue 36): a checked whole-text save, the inbox by hand ------------


# -- helpers ---------------------------------------------------------------------------------------


def _hostname() -> str:
    import socket  # ~5 ms to import, for this one call when a vault is opened without an origin

    return socket.gethostname()
