"""The Memory service: the one engine that the CLI, the MCP server and the Python API call."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import apsw

from . import context, fileio, index, maintenance, trash, writes
from .errors import (
    Busy,
    IndexUnavailable,
    InvalidInput,
    NotFound,
    ScopeDenied,
)
from .freshness import Freshness, watching_wanted
from .freshness import trusted_mtime as _trusted_mtime  # noqa: F401 - where tests have found it
from .index import BUSY as BUSY_INDEX
from .index import DAMAGED as DAMAGED_INDEX
from .index import UNWRITABLE as UNWRITABLE_INDEX
from .index import Filters, Index, Row
from .models import (
    Context,
    Damaged,
    DoctorReport,
    Hit,
    Note,
    NoteSummary,
    RefreshReport,
)
from .notefile import load_note
from .rows import summary
from .search import run
from .vault import (
    VaultConfig,
    bare_permalink,
    folder_scope,
    load_config,
    parse_moment,
    parse_timezone,
    safe_folder,
    scope_folder,
    validate_scope,
)

if TYPE_CHECKING:
    from . import snapshot

# ``markdown`` (and PyYAML with it) is imported inside the methods that write: reads never need
# it, and a one-shot ``cairn search`` starts about 30 ms sooner without it.

Progress = Callable[[int, int], None]  # (done, total)

MAX_LIMIT = 1000
_T = TypeVar("_T")
_P = ParamSpec("_P")


@contextlib.contextmanager
def _busy_is_an_error(index_path: Path | None = None) -> Iterator[None]:
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


def _mends_index(method: Callable[Concatenate[Memory, _P], _T]) -> Callable[Concatenate[Memory, _P], _T]:
    """Run ``method`` again on a new index if SQLite finds the index file damaged: it is only a
    cache, rebuilt from the files by the next scan. Safe for the methods that write a file too:
    once one is written, damage is absorbed where the index is told (``_index_written``), so
    what reaches this retry happened before anything was written."""

    @functools.wraps(method)
    def mended(self: Memory, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with _busy_is_an_error(self.index_path):
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


class Memory:
    """A vault of Markdown notes and its rebuildable SQLite index.

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
        return memory

    def close(self) -> None:
        with self._lock:
            if self._watcher is not None:
                self._watcher.close()
            self._index.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------------

    @_mends_index
    def write(
        self,
        title: str,
        *,
        body: str = "",
        type: str = "note",
        folder: str = "",
        tags: Sequence[str] = (),
        observations: Sequence[str] = (),
        relations: Sequence[str] = (),
        fields: Mapping[str, Any] | None = None,
        sensitivity: str | None = None,
        overwrite: bool = False,
        scope: str | None = None,
    ) -> Note:
        """Create a note (or replace it when ``overwrite``); returns it as written.

        ``observations`` are ``"[category] text #tag (context)"`` strings; ``relations`` are
        ``"type [[Target]] (context)"`` strings.

        Raises:
            AlreadyExists: a note with that title exists in the folder and ``overwrite`` is false.
            DamagedNote: the file at that place does not parse (it is left as it is).
            InvalidInput: bad title, type, tags, folder, observation or relation syntax.
            FolderUnwritable: the folder cannot be written (read-only, immutable, full).
        """
        return writes.write(
            self,
            self._write_scope(scope),
            title,
            body=body,
            type=type,
            folder=folder,
            tags=tags,
            observations=observations,
            relations=relations,
            fields=fields,
            sensitivity=sensitivity,
            overwrite=overwrite,
        )

    @_mends_index
    def append(self, permalink: str, line: str, *, scope: str | None = None) -> Note:
        """Add one observation (``[cat] text``) or relation (``type [[Target]]``) to a note.

        Raises:
            NotFound: no such note (append never creates one).
            InvalidInput: the line is neither an observation nor a relation.
        """
        return writes.append(self, self._write_scope(scope), permalink, line)

    @_mends_index
    def edit(
        self, permalink: str, find: str, replace: str, *, expected: int = 1, scope: str | None = None
    ) -> Note:
        """Literal find/replace in the note's text.

        Raises:
            EditMismatch: ``find`` occurs a number of times other than ``expected``; nothing changes.
            InvalidInput: empty ``find``, or the result would not parse.
            Conflict: the note was removed by another program meanwhile.
        """
        return writes.edit(self, self._write_scope(scope), permalink, find, replace, expected)

    @_mends_index
    def delete(self, permalink: str, *, reason: str | None = None, scope: str | None = None) -> Note:
        """Soft delete: move the file into ``<scope>/.trash/``; ``restore`` brings it back.

        Returns:
            The note as it now lies in the trash: its ``path`` is ``<scope>/.trash/...``, its
            front matter has ``deleted`` (and ``deleted_reason``).
        """
        return trash.delete(self, self._write_scope(scope), permalink, reason)

    @_mends_index
    def restore(self, permalink: str, *, scope: str | None = None) -> Note:
        """Bring a soft-deleted note back to where it was (or beside it, if that place is taken).

        If another note took its permalink meanwhile, the restored note gets a new one (see the
        returned note): two notes with one permalink could not be told apart by any call.
        Of several deleted copies the newest comes back; the returned note's ``notices`` say
        what else happened (older copies kept, a new permalink, a new place).

        Raises:
            NotFound: no such permalink in the scope's trash.
            AlreadyExists: the note is in the vault already (restored before): the copy stays.
        """
        return trash.restore(self, self._write_scope(scope), permalink)

    def trash(self, *, scope: str | None = None) -> list[Note]:
        """The notes in the scope's trash, newest deletion first: each ``path`` is where it lies
        (``<scope>/.trash/...``), its front matter holds ``deleted`` (and ``deleted_reason``).
        ``restore(permalink)`` brings one back."""
        scope = self._write_scope(scope)
        with self._lock:
            if not self.vault.is_dir():
                return []
            return [replace(t.note, path=t.path) for t in trash.trashed(self, scope)]

    # -- reads ----------------------------------------------------------------------------------

    @_mends_index
    def read(self, identifier: str, *, scope: str | None = None) -> Note:
        """Read by permalink, ``memory://permalink``, exact title, or vault-relative path.

        Raises:
            NotFound: nothing by that name in the scope.
            DamagedNote: the file does not parse.
        """
        scopes = self._read_scopes(scope)
        with self._lock:
            self._sync()
            return self._load(self._resolve(identifier, scopes).path)

    @_mends_index
    def list(
        self,
        *,
        folder: str | None = None,
        tag: str | None = None,
        type: str | None = None,
        include_sensitive: bool = True,
        limit: int | None = None,
        scope: str | Sequence[str] | None = None,
    ) -> list[NoteSummary]:
        """Notes in a folder and/or with a tag and/or of a type, newest first (no bodies)."""
        filters = Filters(
            scopes=self._read_scopes(scope),
            tags=(tag.strip().lstrip("#"),) if tag and tag.strip() else (),  # "#work" as search reads it
            type=type,
            folder=safe_folder(folder) if folder else None,
            include_sensitive=include_sensitive,
        )
        if limit is not None and limit < 1:
            raise InvalidInput("limit must be 1 or more")
        with self._lock:
            self._sync()
            return [summary(row) for row in self._index.list(filters, limit)]

    @_mends_index
    def search(
        self,
        query: str = "",
        *,
        tags: Sequence[str] = (),
        type: str | None = None,
        folder: str | None = None,
        since: str | None = None,
        until: str | None = None,
        created_since: str | None = None,
        created_until: str | None = None,
        where: Mapping[str, Any] | None = None,
        include_sensitive: bool = False,
        include_expired: bool = False,
        limit: int = 10,
        granularity: str = "note",
        scope: str | Sequence[str] | None = None,
    ) -> list[Hit]:
        """Keyword + structure search (DESIGN section 4).

        Args:
            query: words in any language; Chinese needs no spaces. Empty: filters only, newest first.
            tags: every one must be on the note. ``type``, ``folder``: exact type, folder and below.
            since, until: bounds on ``modified`` (ISO date/time, or ``7d``, ``12h``, ``2w`` back).
            created_since, created_until: the same on ``created``.
            where: front-matter filters, ``{"status": "active"}`` or ``{"confidence": {"$gt": 0.7}}``
                with ``$gt $gte $lt $lte $in $ne``.
            include_sensitive: also search notes marked ``sensitivity: sensitive`` and
                observations tagged ``#sensitive``.
            include_expired: also search notes whose ``expires`` has passed.
            granularity: ``note`` (one hit per note) or ``line`` (one hit per matching line).

        Returns:
            Hits, best first; ties by ``modified`` (newest first), then permalink. A note linked
            to or from a hit gains a share of its score (``LINK_SHARE``, more when the query names
            the link's type), so it may be a hit without holding a query word (its ``coverage``
            then says so). A superseded note comes right after the note that replaces it (added
            if the query missed it), and notes that claim different values for one key come
            together, each naming the others.
        """
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
        if granularity not in ("note", "line"):
            raise InvalidInput("granularity must be 'note' or 'line'")
        filters = Filters(
            scopes=self._read_scopes(scope),
            tags=tuple(t.strip().lstrip("#") for t in tags if t.strip()),
            type=type or None,
            folder=safe_folder(folder) if folder else None,
            since=parse_moment(since, self.tz) if since else None,
            until=parse_moment(until, self.tz, end_of_day=True) if until else None,
            created_since=parse_moment(created_since, self.tz) if created_since else None,
            created_until=parse_moment(created_until, self.tz, end_of_day=True) if created_until else None,
            where=dict(where) if where else None,
            include_sensitive=include_sensitive,
            include_expired=include_expired,
            now=time.time(),
        )
        with self._lock:
            self._sync()
            return run.search(self._index, query, filters, limit, granularity)

    @_mends_index
    def context(
        self,
        url: str,
        *,
        depth: int = 1,
        timeframe: str | None = None,
        include_sensitive: bool = False,
        include_expired: bool = False,
        scope: str | Sequence[str] | None = None,
    ) -> Context:
        """Notes named by ``memory://permalink`` (``*`` wildcards allowed) and what their relations
        reach within ``depth`` hops, in both directions; ``timeframe`` (``7d``, an ISO date) keeps
        related notes modified since then. Relations to notes that do not exist yet are listed as
        ``unresolved`` and resolve as soon as the target is written.

        A note named exactly is read whatever it is. As in search, a wildcard and the hops pass over
        sensitive and expired notes, and relations written on #sensitive lines, unless asked for.
        """
        scopes = self._read_scopes(scope)
        if not 0 <= depth <= 5:
            raise InvalidInput("depth must be between 0 and 5")
        bound = parse_moment(timeframe, self.tz) if timeframe else None
        target = bare_permalink(url)
        visible = Filters(
            scopes, include_sensitive=include_sensitive, include_expired=include_expired, now=time.time()
        )
        with self._lock:
            self._sync()
            return context.gather(
                self._index,
                url,
                target,
                resolve=lambda ident: self._resolve(ident, scopes),
                load=self._load,
                depth=depth,
                bound=bound,
                visible=visible,
            )

    @_mends_index
    def snapshot(
        self,
        query: str = "",
        *,
        scopes: str | Sequence[str] | None = None,
        top_k: int = 20,
        max_bytes: int = 8192,
        max_tokens: int = 2048,
    ) -> snapshot.Snapshot:
        """Memory to inject before a model step: bounded, escaped, current, in a stable order.

        Notes relevant to ``query`` come first, ranked on their own words (search also lifts the
        notes linked to its hits: a snapshot shows each note's relation lines instead, and reading
        the links of its 3 x ``top_k`` candidates made it half again as slow), then confirmed
        preferences (``type: preference`` not marked ``confirmed: false``), then the scope's
        ``sections/`` by their ``order``. Sensitive notes and observations, expired notes and
        superseded notes never appear; the closing line names what was left out and why.

        Raises:
            InvalidInput: budgets too small to hold even the empty wrapper.
        """
        from . import snapshot_gather  # only snapshots need it: searches start ~8 ms faster without it

        scope_list = self._read_scopes(scopes)
        with self._lock:
            self._sync()
            return snapshot_gather.gather(
                self._index,
                query,
                scope_list,
                top_k=top_k,
                max_bytes=max_bytes,
                max_tokens=max_tokens,
                now=time.time(),
            )

    # -- maintenance ----------------------------------------------------------------------------

    @_mends_index
    def refresh(self) -> RefreshReport:
        """Bring the index up to date with the files (only changed files are parsed). Being asked
        for, it also hashes the files whose size and mtime did not change (docs/freshness.md)."""
        with self._lock:
            self._vault_exists()
            return self._fresh.sync(full=True, verify=True)

    def _replace_index(self) -> None:
        """A new, empty index in place of a damaged one; the next scan indexes every file."""
        self._index.replace()
        self._fresh.forget_all()

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

    @property
    def indexed_files(self) -> int:
        """How many files the index holds (0 before the first scan of a new vault)."""
        return len(self._fresh.stamps)

    # -- internals ------------------------------------------------------------------------------

    def _vault_exists(self) -> None:
        """Reads never create a vault (``open(create=False)``): a mistyped path says so instead."""
        if self._reads_need_vault and not self.vault.is_dir():
            raise NotFound(f"no vault at {self.vault} (run: cairn init {self.vault})")

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

    def _governance_place(self, scope: str | None) -> Any:
        from .governance.files import Place

        chosen = self._write_scope(scope)
        return Place(
            memory=self,
            vault=self.vault,
            scope=chosen,
            tz=self.tz,
            origin=self.origin,
            home=self.home,
            writing=self._writing,
            taken=lambda: self._index.permalinks(chosen),
        )

    def observe(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        durable: bool | None = None,
        source: str | None = None,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Write a draft observation into ``<scope>/inbox/`` (see ``governance.inbox.observe``).

        Returns ``{"id", "duplicate", "open", "capacity", "path"}``; raises InvalidInput (over
        2,000 characters), SecretRefused, or InboxFull (``observations_max`` open: run a dream).
        """
        from .governance import inbox

        place = self._governance_place(scope)
        with self._writing():
            return inbox.observe(place, content, tags=tags, durable=durable, source=source or self.origin)

    def projection(self, scope: str | None = None) -> dict[str, Any]:
        """The scope's sections in order, cut at ``inject_char_cap`` characters with a closing line
        saying so; sensitive sections never appear. ``{"scope", "text", "truncated", "chars", "cap", ...}``."""
        from .governance import sections

        return sections.projection(self._governance_place(scope))

    def dream_load(self, scope: str | None = None) -> dict[str, Any]:
        """Sections, entities and open observations of the scope, each with its ``rev``."""
        from .governance import dream

        return dream.load(self._governance_place(scope))

    def dream_apply(
        self, decisions: Any, summary: str = "", *, scope: str | None = None, trigger: str = "api"
    ) -> dict[str, Any]:
        """Apply a dream's decisions, each on its own and checked against its rev; one entry in
        log.md, index.md rebuilt. Raises DreamOff while the dream is off."""
        from .governance import dream

        place = self._governance_place(scope)
        with self._writing():
            return dream.apply(place, decisions, summary, trigger=trigger)

    def dream_status(self, scope: str | None = None) -> dict[str, Any]:
        """dream.json, the open observation count and capacity, and the last log entries."""
        from .governance import dream, dream_config, inbox

        place = self._governance_place(scope)
        config = dream_config.read(place)
        open_obs, _ = inbox.open_observations(place)
        return {
            "scope": place.scope,
            **config.to_dict(),
            "open": len(open_obs),
            "capacity": place.setting("observations_max", inbox.DEFAULT_MAX_OPEN, least=1),
            "file": place.rel("dream.json"),
            "log": dream.read_log(place, 5),
        }

    def dream_switch(
        self,
        enabled: bool | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        daily_at: str | None = None,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Turn the dream on or off and/or set its model, endpoint and daily time (``""`` clears
        ``daily_at``); returns the new dream.json."""
        from .governance import dream_config, dream_runner

        place = self._governance_place(scope)
        changes: dict[str, Any] = {}
        if enabled is not None:
            changes["enabled"] = bool(enabled)
        if model is not None:
            changes["model"] = model.strip() or None
        if base_url is not None:
            if base_url.strip():
                dream_runner.endpoint(base_url)  # refuses what is not an http(s) URL
            changes["base_url"] = base_url.strip() or None
        if daily_at is not None:
            changes["daily_at"] = dream_config.check_daily_at(daily_at)
        with self._writing():
            return dream_config.update(place, **changes).to_dict()

    def dream_run(
        self,
        scope: str | None = None,
        *,
        trigger: str = "manual",
        transport: Any = None,
        call_tool: Any = None,
    ) -> dict[str, Any]:
        """Run one dream now with the model of dream.json (``governance.dream_runner.run``)."""
        from .governance import dream_runner

        place = self._governance_place(scope)
        return dream_runner.run(place, trigger=trigger, transport=transport, call_tool=call_tool)

    def dream_tick(
        self, scope: str | None = None, *, now: datetime | None = None, transport: Any = None
    ) -> Any:
        """Run the scope's daily dream if it is due (the day is stamped first); None if not due."""
        from .governance import dream_runner

        return dream_runner.scheduled(self._governance_place(scope), now, transport=transport)

    # -- portable: export, import, journal (issue 36; logic in cairn.portable and cairn.journal) --

    @_mends_index
    def notes_for_export(self, scopes: str | Sequence[str] | None = None) -> tuple[list[Note], list[Damaged]]:
        """Every note of ``scopes`` (default: every allowed scope) read from its file, in path
        order, and the files passed over because they do not parse (or their names are not UTF-8).
        The trash and other dot-folders are not notes and are left out."""
        from .portable import vault_io

        wanted = self._read_scopes(scopes) if scopes else self.allow_scopes
        with self._lock:
            return vault_io.notes_for_export(self, wanted)

    @_mends_index
    def put_notes(
        self, notes: Sequence[tuple[str, str, str]], *, replace: bool = False, dry_run: bool = False
    ) -> list[tuple[str, str]]:
        """Write whole note texts exactly as given, for import: front matter kept (created,
        modified, permalink, origin), nothing stamped; each atomic and indexed at once.

        Args:
            notes: (scope, path relative to the scope folder, text) for each note.
            replace: overwrite a different note found at a note's path.
            dry_run: decide and report only; nothing is written.
        Returns:
            For each note, (status, detail): ``new``, ``same``, ``changed`` or ``conflict``;
            detail is the vault path, or for a conflict why.
        Raises:
            AlreadyExists: (not in a dry run) a note conflicts: nothing at all is written.
            InvalidInput: a bad path, or text that is not a note. SecretRefused: a credential.
        """
        from .portable import vault_io

        planned = vault_io.plan(self, [(self._write_scope(scope), path, text) for scope, path, text in notes])
        with self._writing():
            return vault_io.put(self, planned, replace=replace, dry_run=dry_run)

    @_mends_index
    def journal(self, text: str, *, sensitive: bool = False, scope: str | None = None) -> Note:
        """Append a timestamped entry to this month's journal, ``<scope>/journal/YYYY-MM.md``
        (made on the first entry). One entry is one line added at the end, and the file's front
        matter is never touched again, so two devices appending merge as plain line additions.
        ``sensitive`` entries are tagged ``#sensitive``: never in a search, snapshot or export
        unless asked for.

        Raises:
            InvalidInput: empty text. SecretRefused: a credential in the text.
        """
        from . import journal

        scope = self._write_scope(scope)
        with self._writing():
            return journal.append_entry(self, scope, text, sensitive=sensitive)

    @_mends_index
    def journal_month(self, month: str, *, scope: str | None = None) -> Note:
        """The journal of ``month`` (``YYYY-MM``). Raises NotFound when it has no entry."""
        from . import journal

        scope = self._write_scope(scope)
        rel = journal.month_path(scope_folder(scope), journal.check_month(month))
        with self._lock:
            if not (self.vault / rel).is_file():
                raise NotFound(f"no journal for {month} in scope {scope}")
            return self._load(rel)

    # -- for the web panel (issue 36): a checked whole-text save, the inbox by hand ------------

    @_mends_index
    def replace_text(self, permalink: str, text: str, if_version: str, *, scope: str | None = None) -> Note:
        """Replace a note's whole text, only if its file is still at ``if_version`` (``Note.version``).

        Raises:
            Conflict: the file changed since that version was read; nothing is written.
            InvalidInput: the text would not parse as a note, or is too large.
            SecretRefused: a new line holds a credential.
        """
        return writes.replace_text(self, self._write_scope(scope), permalink, text, if_version)

    def settle_observation(
        self, observation_id: str, outcome: str, *, reason: str | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """Archive or drop one open observation by hand (a person's decision; no dream needed):
        it moves to ``inbox/archived/`` with ``outcome`` (``archived`` or ``dropped``), and
        log.md records it. Raises NotFound for an id that is not open."""
        from .governance import inbox

        place = self._governance_place(scope)
        with self._writing():
            return inbox.settle(place, observation_id, outcome, reason)


# -- helpers ---------------------------------------------------------------------------------------


def _hostname() -> str:
    import socket  # ~5 ms to import, for this one call when a vault is opened without an origin

    return socket.gethostname()
