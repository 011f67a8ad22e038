"""The Memory service: the one engine that the CLI, the MCP server and the Python API call."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import stat
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from . import context, index, lifecycle, ranking, records
from .errors import AlreadyExists, Busy, DamagedNote, EditMismatch, InvalidInput, NotFound, ScopeDenied
from .index import BUSY as BUSY_INDEX
from .index import DAMAGED as DAMAGED_INDEX
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
from .search import analysis, candidates, current, hits, lines, linked
from .search.analysis import prefix_terms
from .search.candidates import Seen
from .search.vocabulary import IndexVocabulary
from .vault import (
    FileStat,
    VaultConfig,
    atomic_write,
    bare_permalink,
    folder_scope,
    generated_file,
    inside_vault,
    load_config,
    make_permalink,
    now_iso,
    parse_moment,
    parse_timezone,
    safe_filename,
    safe_folder,
    scan_notes,
    scope_folder,
    utf8_name,
    validate_scope,
)

if TYPE_CHECKING:
    from . import snapshot

# ``markdown`` (and PyYAML with it) is imported inside the methods that write: reads never need
# it, and a one-shot ``cairn search`` starts about 30 ms sooner without it.

Progress = Callable[[int, int], None]  # (done, total)

MAX_NOTE_BYTES = 2 * 1024 * 1024
MAX_TITLE_CHARS = 200
MAX_LIMIT = 1000
CHECKPOINT_AFTER = 500  # files re-indexed in one go after which the WAL is folded back
_T = TypeVar("_T")
_P = ParamSpec("_P")
# A file this fresh may change again within the same mtime tick, so it is hashed again at the next
# scan. File systems that keep whole seconds (FAT: two) need seconds; where an mtime has digits
# below the second, the tick is 15.6 ms at the coarsest (Windows), and 0.1 s leaves a wide margin.
_RACY_SECONDS = 2.0
_RACY_SECONDS_FINE = 0.1
_TYPE = re.compile(r"[\w-]{1,64}")  # used with fullmatch
_RESERVED_FIELDS = ("title", "permalink", "created", "modified", "origin", "type", "tags", "sensitivity")

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: writes are serialised within the process only
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def _busy_is_an_error() -> Iterator[None]:
    """Say so when another process keeps the index locked past the wait: a person can run the
    command again once, say, that process's reindex is done."""
    try:
        yield
    except BUSY_INDEX as exc:
        raise Busy("the index is in use by another process: try again when it is done") from exc


def _mends_index(method: Callable[Concatenate[Memory, _P], _T]) -> Callable[Concatenate[Memory, _P], _T]:
    """Run ``method`` again on a new index if SQLite finds the index file damaged: it is only a
    cache, rebuilt from the files by the next scan. Safe for the methods that write a file too:
    once one is written, damage is absorbed where the index is told (``_index_written``), so
    what reaches this retry happened before anything was written."""

    @functools.wraps(method)
    def mended(self: Memory, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with _busy_is_an_error():
            try:
                return method(self, *args, **kwargs)
            except DAMAGED_INDEX:
                with self._lock:
                    self._replace_index()
                return method(self, *args, **kwargs)

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
        self._lock_path = home / "locks" / f"{vault_id}.lock"
        self._lock = threading.RLock()
        with _busy_is_an_error():
            self._index = Index(self.index_path)
            # What the index holds of each file: (size, mtime) to spot a change. The hash that
            # confirms one is read for the changed files only: held for every file, it cost 37 ms
            # and 16 MB at 100k notes in every command.
            try:
                self._stamps = self._index.file_stamps()
            except DAMAGED_INDEX:
                self._replace_index()
        with contextlib.suppress(OSError):  # only a cache: never a reason to fail
            index.remove_stale_versions(self.index_path.parent, vault_id)
        if watch:
            # imported here: only `cairn serve` watches; ctypes and friends cost ~20 ms per command
            from .watch import Watcher
        # Watch before the first scan, so that nothing changed in between goes unseen.
        self._watcher = Watcher.start(vault) if watch and _watching_wanted() else None
        self._needs_scan = True

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

        Raises:
            InvalidInput: a bad scope, a vault that is a file, a state directory inside the vault.
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
            (vault_path / scope_folder(scope)).mkdir(parents=True, exist_ok=True)
            home_path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInput(f"cannot create the vault at {vault_path}: {exc.strerror}") from exc
        return cls(
            vault_path,
            home_path,
            scope=scope,
            allow_scopes=allow,
            origin=origin or _hostname(),
            config=config,
            watch=watch,
        )

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
        """
        from . import markdown

        scope = self._write_scope(scope)
        title = _clean_title(title)
        if not _TYPE.fullmatch(type or ""):
            raise InvalidInput(
                f"type {type!r} must be one word of letters, digits, '_' or '-' (e.g. note, course)"
            )
        clean_tags = _clean_tags(tags)
        obs_lines = [_observation_line(spec) for spec in observations]
        rel_lines = [_relation_line(spec) for spec in relations]
        extra = dict(fields or {})
        for name in extra:
            if name in _RESERVED_FIELDS:
                raise InvalidInput(
                    f"field {name!r} is set by Cairn or by its own parameter, not through fields"
                )
        sensitivity = _sensitivity(sensitivity or str(extra.pop("sensitivity", "") or "") or "normal")
        lifecycle.validate(extra, self.tz)
        _check_body(body)
        _guard_note(
            title, body, obs_lines, rel_lines, clean_tags, extra, sensitive=sensitivity == "sensitive"
        )
        spelled = _as_spelled(self.vault / scope_folder(scope), safe_folder(folder)) if folder else ""
        rel = "/".join(p for p in (scope_folder(scope), spelled, safe_filename(title) + ".md") if p)

        with self._writing():
            path = self.vault / rel
            _check_inside(self.vault, rel)
            if not path.exists() and (twin := self._index.twin_path(rel)) is not None:
                # "python.md" beside "Python.md" would be one file on a case-insensitive drive
                # (macOS, Windows, most cloud folders), and two notes no title can tell apart.
                # Looked up in the index (just synced), not by listing a folder of 10k notes.
                path, rel = self.vault / twin, twin
            old: Note | None = None
            if path.exists():
                old = self._load(rel)  # raises DamagedNote: a broken file is never overwritten
                if not overwrite:
                    raise AlreadyExists(
                        f"a note titled {old.title!r} already exists at {rel} (permalink {old.permalink}); "
                        "add to it with append or edit instead of writing it again"
                    )
            now = now_iso(self.tz)
            front: dict[str, Any] = dict(old.frontmatter) if old else {}
            for name in ("deleted", "deleted_reason"):
                front.pop(name, None)
            front.update(
                title=title,
                type=type,
                permalink=old.permalink
                if old
                else make_permalink(title, scope, self._index.permalinks(scope)),
                tags=clean_tags,
                created=old.created if old and old.created else now,
                modified=now,
                origin=self.origin,
                sensitivity=sensitivity,
            )
            front.update(extra)
            if front["permalink"] in lifecycle.supersedes(front):
                raise InvalidInput(
                    f"this note's permalink is {front['permalink']}, so it would supersede itself; "
                    "leave that permalink out of supersedes (a deleted note needs no replacing)"
                )
            text = markdown.new_note(front, title, body, obs_lines, rel_lines)
            return self._commit(rel, text)

    @_mends_index
    def append(self, permalink: str, line: str, *, scope: str | None = None) -> Note:
        """Add one observation (``[cat] text``) or relation (``type [[Target]]``) to a note.

        Raises:
            NotFound: no such note (append never creates one).
            InvalidInput: the line is neither an observation nor a relation.
        """
        from . import markdown

        scope = self._write_scope(scope)
        spec = line.strip()
        if spec.startswith("- "):
            spec = spec[2:].strip()
        if spec.startswith("[") and not spec.startswith("[["):
            section, entry = "Observations", _observation_line(spec)
        elif "[[" in spec:
            section, entry = "Relations", _relation_line(spec)
        else:
            raise InvalidInput(
                f"cannot append {line[:80]!r}: write an observation '[category] text #tag (context)' "
                "or a relation 'type [[Target]]'"
            )
        with self._writing():
            note = self._note_for_update(permalink, scope)
            _check_secrets(entry, sensitive=note.sensitive, where=section[:-1].lower())
            text = markdown.append_to_section(note.text, section, entry)
            return self._commit(note.path, self._stamp(text))

    @_mends_index
    def edit(
        self, permalink: str, find: str, replace: str, *, expected: int = 1, scope: str | None = None
    ) -> Note:
        """Literal find/replace in the note's text.

        Raises:
            EditMismatch: ``find`` occurs a number of times other than ``expected``; nothing changes.
            InvalidInput: empty ``find``, or the result would not parse.
        """
        scope = self._write_scope(scope)
        if not find:
            raise InvalidInput("find text is empty: give the exact text to replace")
        if expected < 1:
            raise InvalidInput("expected must be 1 or more")
        with self._writing():
            note = self._note_for_update(permalink, scope)
            _check_secrets(replace, sensitive=note.sensitive, where="replacement text")
            count = note.text.count(find)
            if count == 0:
                raise EditMismatch(
                    f"the text to find does not occur in {note.title!r} ({note.permalink}); nothing changed. "
                    "Read the note and copy the exact text"
                )
            if count != expected:
                raise EditMismatch(
                    f"the text to find occurs {count} times in {note.title!r} ({note.permalink}), "
                    f"expected {expected}; nothing changed. Give more surrounding text, or expected={count}"
                )
            text = note.text.replace(find, replace)
            # The replacement may complete a secret with the text around it ("sk-proj-" + key).
            before = set(note.text.split("\n"))
            _check_secrets(
                "\n".join(line for line in text.split("\n") if line not in before),
                sensitive=note.sensitive,
                where="edited text",
            )
            _check_body(text)
            try:
                stamped = self._stamp(text)  # parses the edited text: a broken one raises here
            except DamagedNote as exc:
                raise InvalidInput(
                    f"that edit would break the note's front matter ({exc.message}); nothing changed"
                ) from exc
            return self._commit(note.path, stamped)

    @_mends_index
    def delete(self, permalink: str, *, reason: str | None = None, scope: str | None = None) -> Note:
        """Soft delete: move the file into ``<scope>/.trash/``; ``restore`` brings it back."""
        from . import markdown

        scope = self._write_scope(scope)
        with self._writing():
            note = self._note_for_update(permalink, scope)
            if reason:  # it is written into the note, which the trash keeps in the vault
                _check_secrets(reason, sensitive=note.sensitive, where="reason")
            scope_dir, _, rest = note.path.partition("/")
            target = _free_path(self.vault, f"{scope_dir}/.trash/{rest}")
            _check_inside(self.vault, target)
            updates: dict[str, Any] = {"deleted": now_iso(self.tz)}
            if reason:
                updates["deleted_reason"] = reason.strip()
            atomic_write(self.vault / target, markdown.set_fields(note.text, updates).encode("utf-8"))
            (self.vault / note.path).unlink()
            if self._index_written(lambda: self._index.remove(note.path)):
                self._stamps.pop(note.path, None)
            return note

    @_mends_index
    def restore(self, permalink: str, *, scope: str | None = None) -> Note:
        """Bring a soft-deleted note back to where it was (or beside it, if that place is taken).

        If another note took its permalink meanwhile, the restored note gets a new one (see the
        returned note): two notes with one permalink could not be told apart by any call.
        """
        from . import markdown

        scope = self._write_scope(scope)
        permalink = bare_permalink(permalink)
        with self._writing():
            trash = self.vault / scope_folder(scope) / ".trash"
            found: list[tuple[str, str, Note]] = []
            for file in sorted(trash.rglob("*.md")) if trash.is_dir() else ():
                rel = file.relative_to(self.vault).as_posix()
                with contextlib.suppress(DamagedNote):
                    note = load_note(rel.replace("/.trash", "", 1), file.read_bytes())
                    if note.permalink == permalink:
                        found.append((str(note.frontmatter.get("deleted", "")), rel, note))
            if not found:
                raise NotFound(f"no deleted note with permalink {permalink!r} in the trash of scope {scope}")
            _deleted, trash_rel, note = max(found, key=lambda item: (item[0], item[1]))
            target = _free_path(self.vault, trash_rel.replace("/.trash", "", 1))
            # Delete then restore gives back the very bytes that were deleted (unless renamed here).
            taken = self._index.permalinks(scope)
            renamed = (
                {"permalink": make_permalink(note.title, scope, taken)} if note.permalink in taken else {}
            )
            text = markdown.set_fields(note.text, renamed, remove=("deleted", "deleted_reason"))
            restored = self._commit(target, text)
            (self.vault / trash_rel).unlink()
            return restored

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
            terms, stats, stands_for = analysis.analyse(query, IndexVocabulary(self._index))
            if query.strip() and not terms:
                return []  # only punctuation or symbols: nothing a keyword can match
            ranker = ranking.Query.build(terms, stats.notes, stats.docs, prefix_terms(terms), stands_for)
            if granularity == "line" and terms:
                return lines.line_hits(self._index, terms, stats, ranker, filters, limit)
            links = None
            if not terms:
                ranked = [(row, 0.0) for row in self._index.list(filters, limit)]
            else:
                seen: dict[int, Seen] = {}
                pool = max(limit, linked.RANKED_AT_LEAST)
                ranked = candidates.search_notes(self._index, terms, filters, pool, stats, seen)
                ranked, links = linked.with_linked(self._index, ranked, seen, filters, pool, ranker)
                ranked = ranked[:limit]
            details = hits.read_details(self._index, [row for row, _ in ranked], filters, links=links)
            found = [
                hits.hit(self._index, row, score, filters, ranker=ranker, details=details)
                for row, score in ranked
            ]
            return current.current_first(self._index, found, filters, ranker)[:limit]

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
        """Bring the index up to date with the files (only changed files are parsed)."""
        with self._lock:
            return self._sync(full=True)

    def _replace_index(self) -> None:
        """A new, empty index in place of a damaged one; the next scan indexes every file."""
        self._index.replace()
        self._stamps = {}
        self._needs_scan = True

    @_mends_index
    def reindex(self, progress: Progress | None = None) -> RefreshReport:
        """Drop the index and rebuild it from the files (and give back the space an index that
        had grown larger no longer needs)."""
        with self._lock:
            # The drop and the rebuild in one transaction: until it commits, every other process
            # reads the index as it was, not an empty one.
            try:
                with self._index.transaction():
                    self._index.reset()
                    self._stamps = {}
                    report = self._sync(progress, full=True)
            except BaseException:
                self._stamps = self._index.file_stamps()  # the index as it was, rolled back
                raise
            self._index.checkpoint()
            self._index.compact()
            return report

    @_mends_index
    def doctor(self) -> DoctorReport:
        """Damaged files (with the reason; also files whose names are not UTF-8, which are not
        indexed), duplicate permalinks, unresolved relations, trash size, in the scopes this caller
        may touch."""
        with self._lock:
            skipped = self._sync(full=True).skipped  # a full scan: every file passed over
            trashes = [self.vault / scope_folder(scope) / ".trash" for scope in self.allow_scopes]
            trashed = sum(1 for trash in trashes if trash.is_dir() for _ in trash.rglob("*.md"))
            damaged = [Damaged(path, error) for path, error in self._index.damaged(self.allow_scopes)]
            return DoctorReport(
                vault=str(self.vault),
                index=str(self.index_path),
                notes=self._index.count(self.allow_scopes),
                damaged=(*damaged, *skipped),
                duplicate_permalinks=tuple(self._index.duplicate_permalinks(self.allow_scopes)),
                unresolved_relations=self._index.unresolved_count(self.allow_scopes),
                trashed=trashed,
            )

    @_mends_index
    def status(self) -> dict[str, Any]:
        """Vault path, index path, scope, allowed scopes, counts, and how this process sees
        hand edits (``freshness``: ``inotify`` events, or a ``scan`` of every file's size and mtime)."""
        with self._lock:
            self._sync()
            return {
                "vault": str(self.vault),
                "home": str(self.home),
                "index": str(self.index_path),
                "scope": self.scope,
                "allow_scopes": list(self.allow_scopes),
                "notes": self._index.count(self.allow_scopes),
                "damaged": len(self._index.damaged(self.allow_scopes)),
                "timezone": str(self.tz),
                "freshness": "inotify" if self._watcher is not None else "scan",
            }

    # -- internals ------------------------------------------------------------------------------

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
        if scope is None or scope == "":
            return self._scopes_allowed([self.scope])
        if isinstance(scope, str):
            return self._scopes_allowed([s.strip() for s in scope.split(",") if s.strip()])
        if not scope:
            raise InvalidInput("scope list is empty")
        return self._scopes_allowed(list(scope))

    def _write_scope(self, scope: str | None) -> str:
        return self._scopes_allowed([scope or self.scope])[0]

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Serialise writers: threads through the RLock, processes on this machine through flock."""
        with self._lock:
            self._lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self._lock_path, "a+b") as handle:
                if fcntl is not None:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    self._sync()
                    yield
                finally:
                    if fcntl is not None:
                        fcntl.flock(handle, fcntl.LOCK_UN)

    def _sync(self, progress: Progress | None = None, *, full: bool = False) -> RefreshReport:
        """Catch the index up with the files; parse only what changed.

        With a watcher, only the files it saw change are checked; otherwise (or when asked, or
        when the watcher lost track) every file's size and mtime is compared with the index.
        """
        notices = None if full or self._watcher is None else self._watcher.changes()
        if notices is None or self._needs_scan:
            self._needs_scan = False
            seen = scan_notes(self.vault)
            removed = sorted(self._stamps.keys() - seen.keys())
        else:
            seen, removed = self._stat_paths(notices)
        known = self._stamps.get
        changed = sorted(path for path, stamp in seen.items() if known(path) != stamp)
        # A name that is not UTF-8 can be neither stored nor shown as it is: never indexed, such a
        # file is "changed" at every look, so checking only changed paths finds every one.
        unnamed = [path for path in changed if not utf8_name(path)]
        if unnamed:
            for path in unnamed:
                del seen[path]
            changed = [path for path in changed if utf8_name(path)]
        skipped = tuple(_unnamed_file(path) for path in unnamed if self._in_allowed_scope(path))
        unchanged = len(seen) - len(changed)
        if not changed and not removed:
            return RefreshReport(scanned=len(seen), unchanged=unchanged, skipped=skipped)
        added = updated = 0
        digests = self._index.digests_of([path for path in changed if path in self._stamps])
        work = [
            (st, _trusted_mtime(st), digests.get(st.path))
            for st in (FileStat(path, *seen[path]) for path in changed)
        ]
        # Counting notes per token costs ~0.15 ms a file, recounting them all ~0.03 ms a note: worth
        # it for a first build or a large import. (Files merely touched are "changed" here too.)
        recount = 4 * sum(path not in self._stamps for path in changed) > len(self._stamps)
        with self._index.transaction(), self._index.batch(recount=recount) as batch:
            for done, record in enumerate(records.read_records(self.vault, work, self.tz), 1):
                path, size = changed[done - 1], seen[changed[done - 1]][0]
                known = digests.get(path)
                if record is None:  # gone since the scan
                    removed.append(path)
                    continue
                if known == record.digest:
                    self._index.touch(path, size, record.mtime_ns)
                    unchanged += 1
                else:
                    batch.insert(record)
                    added, updated = (added + 1, updated) if known is None else (added, updated + 1)
                self._stamps[path] = (size, record.mtime_ns)
                if progress:
                    progress(done, len(changed))
            for path in removed:
                batch.remove(path)
                self._stamps.pop(path, None)
        if added + updated + len(removed) >= CHECKPOINT_AFTER and not self._index.in_transaction:
            self._index.checkpoint()
        damaged = tuple(Damaged(p, e) for p, e in self._index.damaged(self.allow_scopes))
        return RefreshReport(len(seen), added, updated, len(removed), unchanged, damaged, skipped)

    def _in_allowed_scope(self, path: str) -> bool:
        return folder_scope(path.partition("/")[0]) in self.allow_scopes

    def _stat_paths(self, paths: set[str]) -> tuple[dict[str, tuple[int, int]], list[str]]:
        stats: dict[str, tuple[int, int]] = {}
        removed: list[str] = []
        for path in sorted(paths):
            if folder_scope(path.partition("/")[0]) is None or generated_file(path):
                continue
            try:
                st = os.stat(self.vault / path, follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                if path in self._stamps:
                    removed.append(path)
                continue
            if stat.S_ISREG(st.st_mode):
                stats[path] = (st.st_size, st.st_mtime_ns)
            elif path in self._stamps:  # now a link or a folder: no longer a note, as a scan finds
                removed.append(path)
        return stats, removed

    def _load(self, rel: str) -> Note:
        try:
            # One open: bytes and mtime of the same file; never through a link (see inside_vault).
            fd = os.open(self.vault / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, "rb") as file:
                data, mtime_ns = file.read(), os.fstat(file.fileno()).st_mtime_ns
        except FileNotFoundError as exc:  # deleted or moved by another process since it was found
            raise NotFound(f"{rel} no longer exists") from exc
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise NotFound(f"{rel} is now a symbolic link, which Cairn does not follow") from exc
        return load_note(rel, data, mtime_ns=mtime_ns, tz=self.tz)

    def _commit(self, rel: str, text: str) -> Note:
        """Write ``text`` atomically at ``rel`` and index it before returning. Text that would not
        read back as a note (an edit that breaks the front matter) is refused unwritten."""
        data = text.encode("utf-8")
        _check_inside(self.vault, rel)
        try:
            note = load_note(rel, data, tz=self.tz)  # parsed once: checked, returned and indexed
        except DamagedNote as exc:
            raise InvalidInput(f"{exc.message}; the change was not written") from None
        atomic_write(self.vault / rel, data)
        st = os.stat(self.vault / rel)
        stat = FileStat(rel, st.st_size, st.st_mtime_ns)
        if not (note.created and note.modified):  # a hand-made note's dates fall back on the file's
            note = load_note(rel, data, mtime_ns=stat.mtime_ns, tz=self.tz)
        record = records.rows_of(note, size=stat.size, kept_mtime=_trusted_mtime(stat), tz=self.tz)
        if self._index_written(lambda: self._index.insert(record)):
            self._stamps[rel] = (stat.size, record.mtime_ns)
        return note

    def _index_written(self, change: Callable[[], None]) -> bool:
        """Apply ``change`` to the index for a file just written. A damaged index is replaced
        instead (False): the file is written, and the next scan indexes it with every other. So
        too when another process keeps the index locked: the write is done, not to be retried."""
        try:
            with self._index.transaction():
                change()
            return True
        except DAMAGED_INDEX:
            self._replace_index()
            return False
        except BUSY_INDEX:
            return False

    def _stamp(self, text: str) -> str:
        from . import markdown

        return markdown.set_fields(text, {"modified": now_iso(self.tz), "origin": self.origin})

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
        self, scope: str | None = None, *, trigger: str = "manual", transport: Any = None, call_tool: Any = None
    ) -> dict[str, Any]:
        """Run one dream now with the model of dream.json (``governance.dream_runner.run``)."""
        from .governance import dream_runner

        place = self._governance_place(scope)
        return dream_runner.run(place, trigger=trigger, transport=transport, call_tool=call_tool)

    def dream_tick(self, scope: str | None = None, *, now: datetime | None = None, transport: Any = None) -> Any:
        """Run the scope's daily dream if it is due (the day is stamped first); None if not due."""
        from .governance import dream_runner

        return dream_runner.scheduled(self._governance_place(scope), now, transport=transport)

    # -- for the web panel (issue 36): a checked whole-text save, the trash, the inbox by hand ----
    # Kept as one block at the end of the class; each reuses the write path above.

    @_mends_index
    def replace_text(self, permalink: str, text: str, if_version: str, *, scope: str | None = None) -> Note:
        """Replace a note's whole text, only if its file is still at ``if_version`` (``Note.version``).

        Raises:
            Conflict: the file changed since that version was read; nothing is written.
            InvalidInput: the text would not parse as a note, or is too large.
            SecretRefused: a new line holds a credential.
        """
        from .errors import Conflict

        scope = self._write_scope(scope)
        text = text.replace("\r\n", "\n")
        with self._writing():
            note = self._note_for_update(permalink, scope)
            if note.version != if_version:
                raise Conflict(f"{note.title!r} ({note.path}) changed since it was read; nothing was written")
            before = set(note.text.split("\n"))
            _check_secrets(
                "\n".join(line for line in text.split("\n") if line not in before),
                sensitive=note.sensitive,
                where="edited text",
            )
            _check_body(text)
            if text == note.text:
                return note
            try:
                stamped = self._stamp(text)
            except DamagedNote as exc:
                raise InvalidInput(
                    f"that text would not read as a note ({exc.message}); nothing changed"
                ) from exc
            return self._commit(note.path, stamped)

    def trash(self, *, scope: str | None = None) -> list[Note]:
        """The notes in the scope's trash, newest deletion first; each ``path`` is where it lies
        (``<scope>/.trash/...``), its front matter holds ``deleted``. (The same shape as main's
        ``Memory.trash``: on merge, keep main's.)"""
        scope = self._write_scope(scope)
        folder = self.vault / scope_folder(scope) / ".trash"
        found: list[tuple[str, Note]] = []
        for file in sorted(folder.rglob("*.md")) if folder.is_dir() else ():
            rel = file.relative_to(self.vault).as_posix()
            with contextlib.suppress(DamagedNote, OSError):
                note = load_note(rel, file.read_bytes(), tz=self.tz)
                found.append((str(note.frontmatter.get("deleted", "")), note))
        return [note for _, note in sorted(found, key=lambda pair: pair[0], reverse=True)]

    def settle_observation(
        self, observation_id: str, outcome: str, *, reason: str | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """Archive or drop one open observation by hand (a person's decision; no dream needed):
        it moves to ``inbox/archived/`` with ``outcome`` (``archived`` or ``dropped``), and
        log.md records it. Raises NotFound for an id that is not open."""
        from .governance import dream, files, inbox

        if outcome not in ("archived", "dropped"):
            raise InvalidInput("outcome must be 'archived' or 'dropped'")
        if reason:
            _check_secrets(reason, sensitive=False, where="reason")
        place = self._governance_place(scope)
        with self._writing():
            obs = inbox.find_open(place, observation_id)
            if obs is None:
                raise NotFound(f"no open observation {observation_id!r} in scope {place.scope}")
            fields = {"outcome": outcome, **({"reason": reason.strip()} if reason else {})}
            files.commit(place.vault, inbox.archive(place, obs, fields))
            text = f"- {outcome} by hand: {obs.id}" + (f" ({reason.strip()})" if reason else "")
            log = dream.append_log(place, {"kind": "settle", "trigger": "person", "outcome": outcome}, text)
        return {"id": obs.id, "outcome": outcome, "log": log}


# -- helpers ---------------------------------------------------------------------------------------


def _folder_on_disk(directory: Path, name: str) -> str | None:
    """The name of a folder in ``directory`` that differs from ``name`` only in case, width or
    Unicode form: macOS writes names decomposed, and two such names are one on a
    case-insensitive drive."""
    wanted = records.key(name)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError), os.scandir(directory) as entries:
        for entry in entries:
            found = entry.name
            if entry.is_dir(follow_symlinks=False) and utf8_name(found) and records.key(found) == wanted:
                return found
    return None


def _as_spelled(base: Path, folder: str) -> str:
    """``folder`` (under ``base``) as the folders already on disk spell it."""
    parts: list[str] = []
    for part in folder.split("/"):
        current = base.joinpath(*parts)
        if not (current / part).is_dir():
            part = _folder_on_disk(current, part) or part
        parts.append(part)
    return "/".join(parts)


def _unnamed_file(path: str) -> Damaged:
    """A file whose name is not UTF-8, named with its bytes escaped (``caf\\xe9.md``)."""
    shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return Damaged(shown, "the file name is not UTF-8, so the note is not indexed: rename the file")


def _check_inside(vault: Path, rel: str) -> None:
    if not inside_vault(vault, vault / rel):
        raise InvalidInput(
            f"{rel} is reached through a symbolic link; Cairn does not read or write through links, "
            "which could lead out of the vault"
        )


def _clean_title(title: str) -> str:
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput("title is empty: give the note a specific, searchable title")
    title = unicodedata.normalize("NFC", " ".join(title.split()))
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title is {len(title)} characters; keep it under {MAX_TITLE_CHARS}")
    return title


def _clean_tags(tags: Sequence[str]) -> list[str]:
    if isinstance(tags, str):
        tags = [tags]
    clean: list[str] = []
    for tag in tags:
        value = " ".join(str(tag).split()).lstrip("#").strip()
        if not value:
            continue
        if any(c in value for c in ",[]{}\n"):
            raise InvalidInput(
                f"tag {tag!r} may not contain commas, brackets or braces; give tags one by one"
            )
        if len(value) > 64:
            raise InvalidInput(f"tag {value[:20]!r}... is longer than 64 characters")
        if value not in clean:
            clean.append(value)
    return clean


def _sensitivity(value: str) -> str:
    value = value.strip().lower()
    if value not in ("normal", "sensitive"):
        raise InvalidInput(f"sensitivity must be 'normal' or 'sensitive', not {value!r}")
    return value


def _check_body(text: str) -> None:
    if "\x00" in text:
        raise InvalidInput("text contains a NUL character; notes are plain UTF-8 text")
    size = len(text.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise InvalidInput(
            f"text is {size / 1048576:.1f} MiB; one note holds at most {MAX_NOTE_BYTES // 1048576} MiB: split it"
        )


def _hostname() -> str:
    import socket  # ~5 ms to import, for this one call when a vault is opened without an origin

    return socket.gethostname()


def _check_secrets(text: str, *, sensitive: bool, where: str) -> None:
    from . import guard  # only writes need it; reads start faster without its patterns

    guard.check_text(text, sensitive=sensitive, where=where)


def _guard_note(
    title: str,
    body: str,
    observations: Sequence[str],
    relations: Sequence[str],
    tags: Sequence[str],
    fields: Mapping[str, Any],
    *,
    sensitive: bool,
) -> None:
    """Refuse credentials anywhere in what is about to be written (SecretRefused names where)."""
    from . import guard  # only writes need it; reads start faster without its patterns

    guard.check_text(title, sensitive=sensitive, where="title")
    guard.check_text(body, sensitive=sensitive, where="body")
    for number, line in enumerate(observations, 1):
        guard.check_text(line, sensitive=sensitive, where=f"observation {number}")
    for number, line in enumerate(relations, 1):
        guard.check_text(line, sensitive=sensitive, where=f"relation {number}")
    guard.check_text(" ".join(tags), sensitive=sensitive, where="tags")
    for name, value in fields.items():
        guard.check_text(f"{name}: {value}", sensitive=sensitive, where=f"field {name}")


def _observation_line(spec: str) -> str:
    from . import markdown  # only writes need it; reads start ~30 ms faster without it and yaml

    obs = markdown.parse_observation_spec(spec)
    return markdown.format_observation(obs.category, obs.content, obs.tags, obs.context)


def _relation_line(spec: str) -> str:
    from . import markdown  # only writes need it; reads start ~30 ms faster without it and yaml

    rel = markdown.parse_relation_spec(spec)
    return markdown.format_relation(rel.type, rel.target, rel.context)


def _free_path(vault: Path, rel: str) -> str:
    """``rel``, or ``name (2).md``, ``name (3).md``... when it is taken: never overwrite."""
    candidate = rel
    stem, suffix = rel[: -len(".md")], ".md"
    number = 2
    while (vault / candidate).exists():
        candidate = f"{stem} ({number}){suffix}"
        number += 1
    return candidate


def _watching_wanted() -> bool:
    """``CAIRN_WATCH=0`` turns inotify off (e.g. a vault on a network share, where the kernel
    never hears of changes made on other machines): every call then scans."""
    return os.environ.get("CAIRN_WATCH", "1").strip().lower() not in ("0", "false", "no", "off")


def _trusted_mtime(st: FileStat) -> int:
    """The mtime to remember, or -1 when the file is so fresh that a same-tick change could hide."""
    window = _RACY_SECONDS if st.mtime_ns % 1_000_000_000 == 0 else _RACY_SECONDS_FINE
    return -1 if time.time() - st.mtime_ns / 1e9 < window else st.mtime_ns
