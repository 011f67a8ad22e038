"""The Memory service: the one engine that the CLI, the MCP server and the Python API call."""

from __future__ import annotations

import bisect
import contextlib
import errno
import functools
import hashlib
import json
import math
import os
import re
import stat
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Concatenate, NamedTuple, ParamSpec, TypeVar

from . import index, lifecycle, ranking, records, tokenize
from .errors import AlreadyExists, Busy, DamagedNote, EditMismatch, InvalidInput, NotFound, ScopeDenied
from .index import BUSY as BUSY_INDEX
from .index import DAMAGED as DAMAGED_INDEX
from .index import Filters, Index, NoteKey, Row, Seen, TermStats, prefix_terms, search_terms
from .models import (
    Claim,
    Context,
    ContextNode,
    Damaged,
    DoctorReport,
    Hit,
    Note,
    NoteSummary,
    RefreshReport,
    Related,
    Relation,
)
from .notefile import load_note
from .vault import (
    FileStat,
    VaultConfig,
    atomic_write,
    bare_permalink,
    folder_scope,
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
    from .sync import RemoteLink
    from .sync.syncer import SyncReport

# ``markdown`` (and PyYAML with it) is imported inside the methods that write: reads never need
# it, and a one-shot ``cairn search`` starts about 30 ms sooner without it.

Progress = Callable[[int, int], None]  # (done, total)

MAX_NOTE_BYTES = 2 * 1024 * 1024
MAX_TITLE_CHARS = 200
MAX_LIMIT = 1000
RELATED_PER_HIT = 10
# Chinese pairs of one query looked up as short forms of names (_long_forms): 西工大附中 has four.
SHORT_FORMS = 4
SHORT_FORM_RUN = 4  # ... each typed in a word of at most this many characters,
UNKNOWN_WORD_PAIRS = 3  # ... or among at least this many pairs in a row that no note holds
LONG_FORMS = 3  # names one short form may stand for; more, and it stands for none of them
MAX_QUERY_TERMS = 64  # a longer query (a pasted page) searches for its rarest terms the vault holds
SNIPPET_LINE_CHARS = 320  # a pasted log or minified blob is one line: a hit shows this much of each
CHECKPOINT_AFTER = 500  # files re-indexed in one go after which the WAL is folded back
LINE_CANDIDATE_NOTES = 30  # notes whose lines a line search ranks (at least)
# A note linked to or from a hit gains this share of the hit's score: the note a question reaches
# through a link ("who found the coupon bug": the colleague the incident note names) often holds
# none of its words. On the four memory sets every share tried (0.2, 0.4, 0.6) raised R@5 or MRR
# overall on each set and lowered neither (relation queries gained most; two other kinds lost one
# rank on one query each); this is mid-range, not the best of the three.
# A link whose type holds query words ("who prescribed the physio": ``prescribed_by [[Dr. A]]``)
# passes on more, up to the whole score for a type that holds every word asked: the share of the
# query's weight the type holds adds that much of the rest (1 - LINK_SHARE). Measured on the four
# memory sets: three English relation queries rose (4th to 2nd twice, 4th to 3rd), none fell.
LINK_SHARE = 0.3
# Links pass scores between the notes ranked, so a short list would rank on fewer links than a
# long one: with a limit of 3, a note that gains from the 5th hit could lose its place to one that
# only the cut spared. Search ranks at least this many notes before the cut, so that any limit up
# to it (the MCP tool's 8, the CLI's 10) shows the first hits of the same order.
RANKED_AT_LEAST = 10
SNAPSHOT_ITEM_BYTES = 2048  # one long note must not crowd every other note out of a snapshot
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
        self._remote_if_due()  # cairn.sync: a remote not synced for sync_interval is synced first
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
        vault, remote_url = cls._mirror_of(vault or os.environ.get("CAIRN_VAULT"), home_path)  # cairn.sync
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
        mem = cls(
            vault_path,
            home_path,
            scope=scope,
            allow_scopes=allow,
            origin=origin or _hostname(),
            config=config,
            watch=watch,
        )
        mem._attach_remote(remote_url, config)  # cairn.sync: a vault with a remote syncs on open
        return mem

    def close(self) -> None:
        self._detach_remote()  # cairn.sync
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
            return [_summary(row) for row in self._index.list(filters, limit)]

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
            terms, stats, stands_for = self._query_terms(query)
            if query.strip() and not terms:
                return []  # only punctuation or symbols: nothing a keyword can match
            ranker = ranking.Query.build(terms, stats.notes, stats.docs, prefix_terms(terms), stands_for)
            if granularity == "line" and terms:
                return self._line_hits(terms, stats, ranker, filters, limit)
            links = None
            if not terms:
                ranked = [(row, 0.0) for row in self._index.list(filters, limit)]
            else:
                seen: dict[int, Seen] = {}
                pool = max(limit, RANKED_AT_LEAST)
                ranked = self._index.search_notes(terms, filters, pool, stats, seen)
                ranked, links = self._with_linked(ranked, seen, filters, pool, ranker)
                ranked = ranked[:limit]
            details = self._details([row for row, _ in ranked], filters, links=links)
            hits = [self._hit(row, score, filters, ranker=ranker, details=details) for row, score in ranked]
            return self._current_first(hits, filters, ranker)[:limit]

    def _with_linked(
        self,
        ranked: list[tuple[Row, float]],
        seen: dict[int, Seen],
        filters: Filters,
        limit: int,
        ranker: ranking.Query,
    ) -> tuple[list[tuple[Row, float]], _Links]:
        """``ranked`` (``search_notes``, best first) once each note linked to or from a hit has
        gained ``LINK_SHARE`` of the best such hit's score, more for a link whose type the query
        names (see ``LINK_SHARE``): a linked note ranked lower, or not at all, may come in.
        ``seen``: the notes search_notes saw (a linked note outside them scores its gain alone:
        its own score is below the last of them). Also the links read."""
        links = _Links(
            self._index.relations_of_many(
                [r.id for r, _ in ranked], include_private=filters.include_sensitive
            ),
            self._index.backlinks_of_many([r for r, _ in ranked], filters.visibility()),
        )
        # Relation type -> the share of the query's weight it holds. The types are counted in one
        # call: each call folds and scans its texts once, whatever their number.
        types = list(
            dict.fromkeys(
                relation_type
                for by_note in (links.relations, links.backlinks)
                for note_links in by_note.values()
                for relation_type, *_ in note_links
            )
        )
        named = {
            t: ranking.coverage([counts], ranker)
            for t, counts in zip(types, ranking.term_counts(types, ranker), strict=True)
        }

        def share(relation_type: str) -> float:
            return LINK_SHARE + (1 - LINK_SHARE) * named[relation_type]

        gained: dict[tuple[str, str], float] = {}  # (scope, permalink) -> its best share
        for row, score in ranked:
            if score <= 0:
                continue
            linked = [(t, p) for t, _, p in links.relations[row.id] if p]
            linked += [(t, p) for t, _, p in links.backlinks[row.id]]
            for relation_type, permalink in linked:
                if permalink != row.permalink:
                    at = (row.scope, permalink)
                    gained[at] = max(gained.get(at, 0.0), share(relation_type) * score)
        if not gained:
            return ranked, links
        # Ranked on keys alone; whole rows are read only for the linked notes that make the cut.
        scored: dict[int, tuple[float, Row | None, tuple[Any, ...]]] = {}
        for row, score in ranked:
            score += gained.get((row.scope, row.permalink), 0.0)
            scored[row.id] = (score, row, index.rank_order(score, row.modified_ts, row.permalink, row.path))
        shown = {(row.scope, row.permalink) for row, _ in ranked}
        # A linked note outside those seen scores its gain alone; where that cannot reach the
        # score a note must beat to be shown, only the notes seen can come in, and they are known.
        scores = sorted((score for score, _, _ in scored.values()), reverse=True)
        bar = scores[limit - 1] if len(scores) >= limit else -math.inf
        seen_at: dict[tuple[str, str], list[tuple[int, str, str, float | None, str]]] = {}
        for note_id, note in seen.items():
            seen_at.setdefault((note.scope, note.permalink), []).append((note_id, *note[1:]))
        linked: list[tuple[int, str, str, float | None, str]] = []  # id, scope, permalink, modified, path
        wanted: set[str] = set()
        for at, gain in gained.items():
            if at in shown:
                continue
            if gain >= bar:
                wanted.add(at[1])
            else:
                linked += seen_at.get(at, ())
        linked += self._index.keys_by_permalinks(filters, sorted(wanted))
        for note_id, scope, permalink, modified, path in linked:
            if (scope, permalink) in gained and (scope, permalink) not in shown:
                score = (seen[note_id].score if note_id in seen else 0.0) + gained[(scope, permalink)]
                scored[note_id] = (score, None, index.rank_order(score, modified, permalink, path))
        best = sorted(scored.items(), key=lambda item: item[1][2])[:limit]
        unread = [note_id for note_id, (_, row, _) in best if row is None]
        read = self._index.rows_by_ids(unread) if unread else {}
        # A note another process removed meanwhile is left out, as in search_notes.
        return [
            (row if row is not None else read[note_id], score)
            for note_id, (score, row, _) in best
            if row is not None or note_id in read
        ], links

    def _query_terms(self, query: str) -> tuple[list[str], TermStats, dict[str, tuple[str, ...]]]:
        """The query's terms, less the CJK seams between words (``tokenize.seams``), and how
        many notes hold each; then the acronyms or Chinese abbreviations that the query or a name
        in it could stand for, those a note holds (``tokenize.query_acronyms``;
        ``query_abbreviations`` only in a title or tags), each standing for the name's terms, and
        the query's words written together that a note holds
        (``tokenize.query_compounds``), with the terms they stand for. A word of letters and
        digits that no note holds is asked as its parts (``tokenize.letter_digit_parts``), a
        Chinese short form that no note holds as the names it shortens (``_long_forms``)."""
        terms = search_terms(query)
        typed = tokenize.cjk_pairs(query)
        runs = [pairs for pairs in typed if len(pairs) > 2]  # long enough for a seam
        shortened = tokenize.query_acronyms(query, stem=tokenize.STEM_ENGLISH)
        abbreviations = tokenize.query_abbreviations(query)
        for pair in self._index.in_names(list(abbreviations)):
            shortened.setdefault(pair, abbreviations[pair])
        short_forms = {a: words for a, words in shortened.items() if a not in terms}
        joins: dict[str, tuple[str, ...]] = {}
        if len(terms) <= MAX_QUERY_TERMS:  # not for a pasted page: its rarest words carry it (below)
            compounds = tokenize.query_compounds(query, stem=tokenize.STEM_ENGLISH)
            joins = {joined: parts for joined, parts in compounds.items() if joined not in terms}
        splits = {t: s for t in terms if (s := tokenize.letter_digit_parts(t, stem=tokenize.STEM_ENGLISH))}
        pieces = [p for split in splits.values() for p in split]
        asked = dict.fromkeys([*terms, *(p for pairs in runs for p in pairs), *short_forms, *joins, *pieces])
        stats = self._index.term_stats(list(asked))
        # A term no note holds is asked as what it may be written as instead.
        instead = {t: split for t, split in splits.items() if not stats.docs.get(t)}
        instead |= self._long_forms(typed, terms, stats)
        if runs:
            seams = tokenize.seams(runs, lambda pair: stats.docs.get(pair, 0) > 0 or pair in instead, terms)
            terms = [t for t in terms if t not in seams] or terms
        if instead:
            terms = list(dict.fromkeys(t for term in terms for t in instead.get(term, [term])))
            if unasked := [t for t in terms if t not in asked]:
                more = self._index.term_stats(unasked)
                stats = TermStats(stats.notes, {**stats.docs, **more.docs}, {**stats.public, **more.public})
        if len(terms) > MAX_QUERY_TERMS:
            # A pasted page: its rarest words that the vault holds carry the query (BM25 would
            # weigh the rest near zero), and a bounded query stays fast.
            held = sorted(terms, key=lambda t: (stats.docs.get(t, 0) == 0, stats.docs.get(t, 0)))
            kept = set(held[:MAX_QUERY_TERMS])
            terms = [t for t in terms if t in kept]
        stands_for: dict[str, tuple[str, ...]] = {}
        for short, words in short_forms.items():
            if stats.docs.get(short, 0) > 0:
                written = (t for term in search_terms(words) for t in instead.get(term, [term]))
                if kept := tuple(dict.fromkeys(t for t in written if t in terms)):
                    stands_for[short] = kept
        for joined, parts in joins.items():
            if stats.docs.get(joined, 0) > 0 and (kept := tuple(p for p in parts if p in terms)):
                stands_for.setdefault(joined, kept)
        return [*terms, *stands_for], stats, stands_for

    def _long_forms(self, typed: list[list[str]], terms: list[str], stats: TermStats) -> dict[str, list[str]]:
        """The Chinese pairs among ``terms`` that no note holds but that shorten names some notes'
        titles or tags hold (``工行``: ``工商银行``, see ``tokenize.long_forms``), each with the
        terms of those names, which search asks for in its place. Not a pair that could shorten
        more than ``LONG_FORMS`` names.

        Only a pair typed (``typed``: the query's pairs, run by run) in a word of up to
        ``SHORT_FORM_RUN`` characters: in a sentence, a pair no note holds is mostly two words
        meeting (``每个月``: ``每个``, not ``每月第二个``). Or one of a longer run's
        ``UNKNOWN_WORD_PAIRS`` or more pairs in a row that no note holds: words the vault knows
        break such a stretch at every pair they hold, so it is a word the vault does not know,
        most often the short form of a long name (``西工大附中``: ``西北工业大学附属中学``)."""

        def held(pair: str) -> bool:
            return stats.docs.get(pair, 0) > 0

        in_words: set[str] = set()
        for pairs in typed:
            if len(pairs) < SHORT_FORM_RUN:
                in_words.update(pairs)
            else:
                in_words.update(tokenize.unknown_stretches(pairs, held, UNKNOWN_WORD_PAIRS))
        unheld = [t for t in terms if t in in_words and not held(t)]
        written: dict[str, list[str]] = {}
        for pair in unheld[:SHORT_FORMS]:
            names = self._index.names_near(pair[0], pair[1], tokenize.LEFT_OUT_CHARS[1])
            if 0 < len(forms := tokenize.long_forms(pair, names)) <= LONG_FORMS:
                written[pair] = [t for form in forms for t in tokenize.query_terms(form)]
        return written

    def _line_hits(
        self, terms: Sequence[str], stats: TermStats, ranker: ranking.Query, filters: Filters, limit: int
    ) -> list[Hit]:
        """The best lines of the best notes: each line scored on its own words, plus a share of
        its note's score, and of a question's if it follows one (see ``ranking``). Headings are
        never line hits."""
        notes = self._index.search_notes(terms, filters, max(2 * limit, LINE_CANDIDATE_NOTES), stats)
        if not notes:
            return []
        all_lines = self._index.lines_of_many(
            [row.id for row, _ in notes], include_sensitive=filters.include_sensitive
        )
        # Every line of a note counted once, here: ranking reads its content lines' counts, and
        # the hit (its coverage) all of them.
        counted = {row.id: ranking.term_counts([t for _, t in all_lines[row.id]], ranker) for row, _ in notes}
        candidates = []
        for row, note_score in notes:
            lines = all_lines[row.id]
            content = [i for i, (_, text) in enumerate(lines) if not ranking.is_heading(text)]
            candidates.append(
                (row, note_score, lines, [lines[i] for i in content], [counted[row.id][i] for i in content])
            )
        scored = _score_lines(candidates, ranker)[:limit]
        details = self._details([row for _, row, *_ in scored], filters, lines=all_lines)
        per_note: dict[int, _HitExtras] = {}  # several lines, one note
        return [
            self._hit(
                row,
                score,
                filters,
                line=n,
                lines=lines,
                counted=counted[row.id],
                ranker=ranker,
                cache=per_note,
                details=details,
            )
            for score, row, n, lines, _text in scored
        ]

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
            if "*" in target:
                pattern = re.sub(r"([\[\]?])", r"[\1]", target)
                primary_rows = self._index.rows_by_glob(visible, pattern, 50)
                if not primary_rows:
                    raise NotFound(f"no note matches {url!r}")
            else:
                primary_rows = [self._resolve(target, scopes)]
            primary = tuple(self._load(row.path) for row in primary_rows)
            seen = {row.id for row in primary_rows}
            nodes: list[ContextNode] = []
            unresolved: list[Relation] = []
            frontier = primary_rows
            for level in range(1, depth + 1):
                following: list[Row] = []
                for row in frontier:
                    for rel_type, rel_target, linked in self._index.relations_of(
                        row.id, include_private=include_sensitive
                    ):
                        if linked is None:
                            if level == 1:
                                unresolved.append(Relation(rel_type, rel_target))
                            continue
                        for hop in self._index.rows_by_permalink((row.scope,), linked)[:1]:
                            if _visible(hop, visible):
                                following += self._visit(hop, level, rel_type, row, seen, nodes, bound)
                    for rel_type, _title, source in self._index.backlinks_of(row, visible):
                        for hop in self._index.rows_by_permalink((row.scope,), source)[:1]:
                            following += self._visit(hop, level, rel_type, row, seen, nodes, bound)
                frontier = following
            return Context(url=url, primary=primary, related=tuple(nodes), unresolved=tuple(unresolved))

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
        from . import snapshot  # only snapshots need it: searches start ~8 ms faster without it

        scope_list = self._read_scopes(scopes)
        with self._lock:
            self._sync()
            now = time.time()
            current = Filters(scopes=scope_list, now=now)
            every = Filters(scopes=scope_list, include_sensitive=True, include_expired=True, now=now)
            omitted: dict[str, list[str]] = {"sensitive": [], "expired": [], "superseded": []}
            rows: list[tuple[Row, str]] = []
            terms, stats, _ = self._query_terms(query)

            def admit(found: Sequence[Row], why: str) -> None:
                for row in found:
                    if row.sensitivity == "sensitive":
                        omitted["sensitive"].append(row.permalink)
                    elif not _visible(row, current):
                        omitted["expired"].append(row.permalink)
                    else:
                        rows.append((row, why))

            if terms:
                # Sensitive notes are searched to be counted as left out; words on #sensitive
                # lines never count: they would bring in, unnamed, the note that hides them.
                found = self._index.search_notes(terms, every, top_k * 3, stats, private_lines=False)
                admit([row for row, _score in found], "query")
            preferences = replace(every, type="preference", where={"confirmed": {"$ne": False}})
            admit(self._index.keys(preferences), "preference")  # a vault may hold thousands
            sections = [
                r for r in self._index.list(replace(every, folder="sections"), None) if r.folder == "sections"
            ]
            admit(sorted(sections, key=_section_order), "section")
            candidates, beyond = self._snapshot_items(rows, current, omitted, snapshot.reach(top_k))
            return snapshot.build(
                candidates,
                top_k=top_k,
                max_bytes=max_bytes,
                max_tokens=max_tokens,
                omitted=omitted,
                beyond=beyond,
            )

    def _snapshot_items(
        self,
        rows: Sequence[tuple[Row | NoteKey, str]],
        current: Filters,
        omitted: dict[str, list[str]],
        reach: int,
    ) -> tuple[list[snapshot.Item], list[str]]:
        """Replace superseded notes by what replaces them and keep disagreeing claims together.

        Returns the first ``reach`` candidates (a disagreement counting once), which are all a
        snapshot may try, and the permalinks of the notes after them, which it can only name.
        """
        chosen: list[tuple[Row, str, str | None]] = []  # (row, why, claim group)
        beyond: list[str] = []
        units = 0
        seen: set[str] = set()
        queue = deque(rows)
        # A note replaced by a sensitive one is still left out (and the replacement not named).
        replaced = self._index.superseded_by_many(
            [row for row, _ in rows], current.now, include_sensitive=True
        )
        while queue:
            row, why = queue.popleft()
            if row.permalink in seen:
                continue
            replacers = (
                replaced[row.id]
                if row.id in replaced
                else self._index.superseded_by(row, current.now, include_sensitive=True)
            )
            if replacers:
                omitted["superseded"].append(row.permalink)
                seen.add(row.permalink)
                queue.extendleft(
                    reversed(
                        [
                            (r, why)
                            for permalink in replacers
                            for r in self._index.rows_by_permalink((row.scope,), permalink)
                            if _visible(r, current)
                        ]
                    )
                )
                continue
            seen.add(row.permalink)
            if units >= reach:
                beyond.append(row.permalink)
                continue
            if isinstance(row, NoteKey) and (row := self._index.row_by_id(row.id)) is None:
                continue
            units += 1  # the row and its disagreeing mates go in as one
            group = None
            mates: list[Row] = []
            if row.claim_key and (holders := self._disagreeing(current, row.claim_key)):
                group = row.claim_key
                mates = [r for r in holders if r.permalink != row.permalink and r.permalink not in seen]
            for member in [row, *mates]:
                seen.add(member.permalink)
                chosen.append((member, why, group))
        return [self._snapshot_item(row, why, group) for row, why, group in chosen], beyond

    def _disagreeing(self, filters: Filters, claim_key: str) -> list[Row]:
        """The current notes claiming a value for ``claim_key``, if they claim more than one value."""
        holders = self._index.claim_holders(filters, claim_key)
        replaced = self._index.superseded_by_many(holders, filters.now, include_sensitive=True)
        current = [r for r in holders if not replaced[r.id]]
        return current if len({r.claim_value for r in current}) > 1 else []

    def _snapshot_item(self, row: Row, why: str, group: str | None) -> snapshot.Item:
        from . import snapshot

        def body() -> str:  # read only if the snapshot tries this note
            lines = [
                text for _, text in self._index.lines_of(row.id) if text.lstrip("# ").strip() != row.title
            ]
            know = lifecycle.knowledge(json.loads(row.frontmatter))
            if know:
                lines += [f"applies when (not verified): {c}" for c in know.applicability]
                lines += [f"failed when: {c}" for c in know.counterexamples]
                if know.claim_key:
                    lines.append(f"claim: {know.claim_key} = {know.claim_value}")
            if row.expires_ts is not None:
                lines.append(f"expires: {_expires_text(row)}")
            # Counted as it will be shown: escaping can make a line up to six times longer ("{").
            escaped_size = lambda part: len(snapshot.escape(part).encode("utf-8"))  # noqa: E731
            return _clip("\n".join(lines), SNAPSHOT_ITEM_BYTES, row.permalink, escaped_size)

        return snapshot.Item(
            permalink=row.permalink,
            title=row.title,
            scope=row.scope,
            version=row.version,
            origin=row.origin,
            modified=row.modified,
            why=why,
            body=body,
            group=group,
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
                    self._remote_after_write()  # cairn.sync: read-your-writes on the remote
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
            if folder_scope(path.partition("/")[0]) is None:
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

    def _details(
        self,
        rows: Sequence[Row],
        filters: Filters,
        lines: dict[int, list[tuple[int, str]]] | None = None,
        links: _Links | None = None,
    ) -> _Details:
        """Lines and links of the rows about to become hits: four queries for all of them, fewer
        when their ``lines`` or ``links`` (of some of them) were already read."""
        rows = list({r.id: r for r in rows}.values())
        ids = [r.id for r in rows]
        links = links or _Links({}, {})
        unread = [r for r in rows if r.id not in links.relations]
        return _Details(
            lines=lines
            if lines is not None
            else self._index.lines_of_many(ids, include_sensitive=filters.include_sensitive),
            relations=links.relations
            | self._index.relations_of_many(
                [r.id for r in unread], include_private=filters.include_sensitive
            ),
            backlinks=links.backlinks | self._index.backlinks_of_many(unread, filters.visibility()),
            superseded=self._index.superseded_by_many(
                rows, filters.now, include_sensitive=filters.include_sensitive
            ),
        )

    def _hit(
        self,
        row: Row,
        score: float,
        filters: Filters,
        *,
        line: int | None = None,
        ranker: ranking.Query | None = None,
        lines: list[tuple[int, str]] | None = None,
        counted: Sequence[ranking.Counted | None] | None = None,
        cache: dict[int, _HitExtras] | None = None,
        details: _Details | None = None,
    ) -> Hit:
        """A row as a hit; ``details`` (from ``_details``) saves the queries for its lines and links,
        and ``counted`` (``ranking.term_counts`` of ``lines``), if the caller has it, counting them."""
        extras = cache.get(row.id) if cache is not None else None
        if details is None and (lines is None or extras is None):
            details = self._details([row], filters)
        if lines is None:
            lines = details.lines[row.id]  # type: ignore[union-attr]
        # Each line tokenized once, for the best line and for coverage.
        if counted is None and ranker is not None and ranker.terms and (line is None or extras is None):
            counted = ranking.term_counts([t for _, t in lines], ranker)
        if line is None:
            line = _best_line(lines, ranker, counted)
        numbers = [number for number, _ in lines]
        at = bisect.bisect_left(numbers, line)
        snippet = "\n".join(
            _clip_line(text, ranker.probes if ranker else ()) for _, text in lines[max(0, at - 1) : at + 2]
        )
        if extras is None:
            assert details is not None
            related = [Related(t, target, linked) for t, target, linked in details.relations[row.id]]
            related += [Related(t, title, source, "in") for t, title, source in details.backlinks[row.id]]
            covered = None
            if ranker is not None and counted is not None:
                heading = ranking.term_counts([row.title, " ".join(row.tags)], ranker)
                covered = ranking.coverage([*heading, *counted], ranker)
            extras = (
                tuple(related[:RELATED_PER_HIT]),
                details.superseded[row.id],
                covered,
            )
            if cache is not None:
                cache[row.id] = extras
        return Hit(
            permalink=row.permalink,
            title=row.title,
            type=row.type,
            tags=row.tags,
            modified=row.modified,
            path=row.path,
            line=line,
            snippet=snippet,
            score=score,
            scope=row.scope,
            sensitive=row.sensitivity == "sensitive",
            related=extras[0],
            expires=_expires_text(row),
            superseded_by=extras[1],
            coverage=extras[2],
            claim=Claim(row.claim_key, row.claim_value, row.permalink, row.path) if row.claim_key else None,
        )

    def _current_first(self, hits: list[Hit], filters: Filters, ranker: ranking.Query) -> list[Hit]:
        """Put each replacement before what it supersedes, and bring disagreeing claims together.

        A superseded note is never shown alone as if current; two current notes that claim
        different values for one key are both shown, each naming the other, instead of one
        silently winning.
        """
        visible = filters.visibility()
        ordered = list(hits)
        for hit in hits:
            if hit.claim and not hit.superseded_by and (holders := self._disagreeing(visible, hit.claim.key)):
                claims = tuple(Claim(r.claim_key or "", r.claim_value, r.permalink, r.path) for r in holders)
                at = ordered.index(hit)
                ordered[at] = replace(
                    hit, disagreement=tuple(c for c in claims if c.permalink != hit.permalink)
                )
                present = {h.permalink for h in ordered}
                missing = [r for r in holders if r.permalink not in present]
                details = self._details(missing, visible)
                extra = [self._hit(r, 0.0, visible, ranker=ranker, details=details) for r in missing]
                ordered[at + 1 : at + 1] = [
                    replace(e, disagreement=tuple(c for c in claims if c.permalink != e.permalink))
                    for e in extra
                ]
        for hit in [h for h in ordered if h.superseded_by]:
            replacer = hit.superseded_by[0]
            positions = {h.permalink: i for i, h in enumerate(ordered)}
            ordered.remove(hit)
            if replacer in positions:
                at = next(i for i, h in enumerate(ordered) if h.permalink == replacer)
            else:
                rows = [
                    r for r in self._index.rows_by_permalink((hit.scope,), replacer) if _visible(r, visible)
                ]
                if not rows:
                    ordered.insert(positions[hit.permalink], hit)
                    continue
                at = positions[hit.permalink]
                ordered.insert(at, self._hit(rows[0], hit.score, visible, ranker=ranker))
            ordered.insert(at + 1, hit)
        return ordered

    def _visit(
        self,
        row: Row,
        level: int,
        via: str,
        source: Row,
        seen: set[int],
        nodes: list[ContextNode],
        bound: float | None,
    ) -> list[Row]:
        if row.id in seen:
            return []
        seen.add(row.id)
        if bound is not None and (row.modified_ts or 0) < bound:
            return []
        nodes.append(ContextNode(_summary(row), level, via, source.permalink))
        return [row]

    # -- remote sync (cairn.sync; everything sync needs from Memory is in this block) ------------

    _remote: RemoteLink | None = None
    _remote_busy = False  # a sync is running in the thread holding the lock: do not start another

    @staticmethod
    def _mirror_of(vault: str | Path | None, home: Path) -> tuple[str | Path | None, str | None]:
        """``(vault, None)``, or for a remote URL ``(its mirror folder, the URL)``."""
        from .sync import remotes

        url = remotes.as_url(vault)
        if url is None:
            return vault, None
        return remotes.mirror_folder(home, url), url

    def _attach_remote(self, url: str | None, config: VaultConfig) -> None:
        from .sync import RemoteLink
        from .sync.link import sync_on_open

        try:
            interval = config.sync_interval
            self._remote = RemoteLink.attach(self.vault, self.home, origin=self.origin, url=url, interval=interval)
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
            report = self._remote.sync(progress)
        return report

    def sync_status(self) -> dict[str, Any] | None:
        """The remote (password masked), the last sync, the outbox size and the conflict copies;
        None when the vault has no remote."""
        return None if self._remote is None else self._remote.status()

    def start_background_sync(self) -> None:
        """Sync every ``sync_interval`` on a thread until ``close`` (a running server)."""
        if self._remote is not None:
            self._remote.start_timer(self._remote_if_due)

    @contextlib.contextmanager
    def _remote_locked(self) -> Iterator[None]:
        """The writer lock (as ``_writing`` takes it) around a sync, and the index caught up after."""
        with self._lock:
            self._lock_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self._lock_path, "a+b") as handle:
                if fcntl is not None:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                self._remote_busy = True
                try:
                    yield
                finally:
                    self._remote_busy = False
                    if fcntl is not None:
                        fcntl.flock(handle, fcntl.LOCK_UN)
            with contextlib.suppress(DAMAGED_INDEX, BUSY_INDEX):
                self._sync()

    def _remote_after_write(self) -> None:
        """Called by ``_writing`` with the lock held, after a write succeeded."""
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

# -- helpers ---------------------------------------------------------------------------------------


_HitExtras = tuple[tuple[Related, ...], tuple[str, ...], float | None]  # related, superseded_by, coverage


@dataclass(frozen=True)
class _Details:
    """What hits show beyond their row, by note id: fetched for many rows at once."""

    lines: dict[int, list[tuple[int, str]]]
    relations: dict[int, list[tuple[str, str, str | None]]]
    backlinks: dict[int, list[tuple[str, str, str]]]
    superseded: dict[int, tuple[str, ...]]


class _Links(NamedTuple):
    """Relations and backlinks of some notes, by note id, as ``_Details`` holds them."""

    relations: dict[int, list[tuple[str, str, str | None]]]
    backlinks: dict[int, list[tuple[str, str, str]]]


# row, score, lines, its content lines (not headings), and their ``ranking.term_counts``
_Candidate = tuple[Row, float, list[tuple[int, str]], list[tuple[int, str]], list[ranking.Counted | None]]
_ScoredLine = tuple[float, Row, int, list[tuple[int, str]], str]  # score, row, line number, lines, text


def _score_lines(candidates: Sequence[_Candidate], ranker: ranking.Query) -> list[_ScoredLine]:
    """Every content line near a match, best first (ties: newest note, permalink, line). A note
    found by its title, tags or permalink alone, with no such line, is shown by its first line."""
    texts = [[t for _, t in content] for *_, content, _ in candidates]
    counted = [note_counted for *_, note_counted in candidates]
    line_ranker = ranking.for_lines(ranker, counted)  # terms weighed among these lines too
    own_scores = [ranking.line_bm25(t, line_ranker, c) for t, c in zip(texts, counted, strict=True)]
    best_line = max((max(own, default=0.0) for own in own_scores), default=0.0) or 1.0
    best_note = max(score for _, score, *_ in candidates) or 1.0
    scored: list[_ScoredLine] = []
    for (row, note_score, lines, content, note_counted), note_texts, own in zip(
        candidates, texts, own_scores, strict=True
    ):
        labelled = [bool(c and c.labelled) for c in note_counted]
        blended = ranking.blend(note_texts, own, best_line * note_score / best_note, labelled)
        shown = ranking.near_a_match(own)
        if content and not any(shown):
            shown[0] = True
        for (n, text), score, ok in zip(content, blended, shown, strict=True):
            if ok:
                scored.append((score, row, n, lines, text))
    scored.sort(key=lambda item: (-item[0], -(item[1].modified_ts or 0.0), item[1].permalink, item[2]))
    return scored


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


def _clip_line(text: str, probes: Sequence[str]) -> str:
    """``text`` cut to ``SNIPPET_LINE_CHARS`` around the first query term it holds (its start if none)."""
    if len(text) <= SNIPPET_LINE_CHARS:
        return text
    # Near enough to the index's folding to find where a term starts, and no longer than ``text``.
    lowered = tokenize.simplified(text.lower())
    found = [at for p in probes if (at := lowered.find(p)) >= 0]
    start = max(0, min(found, default=0) - SNIPPET_LINE_CHARS // 4)
    start = min(start, len(text) - SNIPPET_LINE_CHARS)
    end = start + SNIPPET_LINE_CHARS
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _best_line(
    lines: Sequence[tuple[int, str]],
    ranker: ranking.Query | None,
    counted: Sequence[ranking.Counted | None] | None,
) -> int:
    """The line (a content line before a heading) with the best BM25; the first on a tie."""
    if not lines:
        return 1
    if ranker is None or not ranker.terms:
        return lines[0][0]
    scores = ranking.line_bm25([t for _, t in lines], ranker, counted)
    best, best_key = lines[0][0], (0.0, False)
    for (number, text), score in zip(lines, scores, strict=True):
        key = (score, not ranking.is_heading(text))  # the title is shown anyway
        if score > 0 and key > best_key:
            best, best_key = number, key
    return best


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


def _expires_text(row: Row) -> str | None:
    if row.expires_ts is None:
        return None
    return datetime.fromtimestamp(row.expires_ts, UTC).replace(microsecond=0).isoformat()


def _visible(row: Row | NoteKey, filters: Filters) -> bool:
    if row.sensitivity == "sensitive" and not filters.include_sensitive:
        return False
    return filters.include_expired or row.expires_ts is None or row.expires_ts > filters.now


def _section_order(row: Row) -> tuple[float, str]:
    order = json.loads(row.frontmatter).get("order")
    return (float(order) if isinstance(order, int | float) else math.inf, row.title)


def _clip(text: str, limit: int, permalink: str, size: Callable[[str], int]) -> str:
    """At most ``limit`` bytes of ``text`` as ``size`` counts them, in whole lines but for a line
    too long to keep, which is cut at a character; saying where the rest is."""
    if size(text) <= limit:
        return text
    kept: list[str] = []
    room = limit
    for line in text.split("\n"):
        cost = size(line) + 1
        if cost <= room:
            kept.append(line)
            room -= cost
            continue
        if room > 64:  # worth showing the start of a long line rather than nothing of it
            cut: list[str] = []
            room -= size("…") + 1
            for char in line:
                room -= size(char)
                if room < 0:
                    break
                cut.append(char)
            kept.append("".join(cut) + "…")
        break
    return "\n".join([*kept, f"... (more in memory://{permalink})"])


def _summary(row: Row) -> NoteSummary:
    return NoteSummary(
        permalink=row.permalink,
        title=row.title,
        type=row.type,
        tags=row.tags,
        scope=row.scope,
        path=row.path,
        created=row.created,
        modified=row.modified,
        sensitivity=row.sensitivity,
    )
