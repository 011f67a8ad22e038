"""The SQLite index: a cache of the vault that can be deleted and rebuilt at any time.

SQLite comes from APSW, which bundles a current release: the standard library links whatever the
system ships (3.40 on Debian 12), and FTS5 ranks the same query there at about half the speed
(mean 8.3 against 4.5 ms over the 10k benchmark's queries). Text is tokenized by
``cairn.tokenize`` (one tokenizer for every SQLite build) and stored as space-separated tokens.
Tokens are made of letters and digits only, already folded, so FTS5's ``ascii`` tokenizer
(which splits only at ASCII spaces and punctuation) keeps each whole, and does so fastest.
The FTS table is contentless (it holds no copy of the tokens); deleting a row replays the same
tokens, recomputed from the note's searchable lines, which ``note_lines`` keeps compressed for
that, for snippets and for ranking lines within a note.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import zlib
from collections.abc import Container, Iterator, Sequence, Sized
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from . import dates, tokenize
from .errors import InvalidInput
from .filters import Filters
from .records import NoteRecord, key, unpack_lines
from .rows import NOTE_COLUMNS as _NOTE_COLUMNS
from .rows import NoteKey, Row

if TYPE_CHECKING:
    from .index_batch import Batch

# Bump when the schema or the tokenizer changes: an index of another version is rebuilt.
SCHEMA_VERSION = f"32/stem={tokenize.STEMMER}/fold={tokenize.FOLDING}/{dates.VERSION}"
# Each schema version keeps its own index file, so that two Cairn versions on one machine (a CLI
# and an MCP server installed apart) do not rebuild one file back and forth, each in turn. A file
# that no version has touched for this long is removed: nothing that still runs uses it.
STALE_INDEX_SECONDS = 30 * 86400
WAL_SIZE_LIMIT = 1 << 20  # bytes
BUSY_TIMEOUT_MS = 10_000  # how long a statement waits for another process's lock
_V = TypeVar("_V")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    path_hash INTEGER NOT NULL,  -- path_hash(path): finds the file a new one would be a twin of
    scope TEXT NOT NULL,
    folder TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    error TEXT,
    permalink TEXT,
    title TEXT,
    title_key TEXT,
    type TEXT,
    tags TEXT,
    created TEXT,
    modified TEXT,
    created_ts REAL,
    modified_ts REAL,
    origin TEXT,
    sensitivity TEXT,
    frontmatter TEXT,
    expires_ts REAL,
    claim_key TEXT,
    claim_value TEXT
);
-- Apart from notes, so that scanning notes (the freshness check reads every row, a filter on
-- front matter may too) stays small. observations: records.pack_observations() of [[line,
-- category, [tags], context, sensitive], ...] (the text is in lines). One value per note, not a
-- row per observation: rows cost a third of a rebuild's writing.
CREATE TABLE note_lines (note_id INTEGER PRIMARY KEY, lines BLOB NOT NULL, observations BLOB);
CREATE INDEX notes_type ON notes (type);
CREATE INDEX notes_folder ON notes (folder);
CREATE INDEX notes_claim ON notes (claim_key);
CREATE TABLE supersedes (note_id INTEGER NOT NULL, target TEXT NOT NULL);
CREATE INDEX supersedes_target ON supersedes (target);
CREATE INDEX supersedes_note ON supersedes (note_id);
CREATE INDEX notes_permalink ON notes (scope, permalink);
CREATE INDEX notes_title ON notes (scope, title_key);
-- In list()'s order (newest first, then permalink and path): the newest few of a vault come from the
-- index's first entries, not from sorting every note (10 ms at 10k notes, 60 ms at 100k).
CREATE INDEX notes_modified ON notes (modified_ts DESC, permalink, path);
-- Every refresh that changed something reports the damaged files: keep that from scanning the table.
CREATE INDEX notes_damaged ON notes (path) WHERE error IS NOT NULL;
CREATE INDEX notes_path_hash ON notes (path_hash);
CREATE TABLE note_tags (note_id INTEGER NOT NULL, tag TEXT NOT NULL);
CREATE INDEX note_tags_tag ON note_tags (tag, note_id);
CREATE INDEX note_tags_note ON note_tags (note_id);
-- private: written on a #sensitive line, so shown only to a caller who asked for sensitive notes.
CREATE TABLE relations (
    note_id INTEGER NOT NULL, line INTEGER NOT NULL, type TEXT NOT NULL,
    target TEXT NOT NULL, target_key TEXT NOT NULL, inline INTEGER NOT NULL, context TEXT,
    private INTEGER NOT NULL
);
CREATE INDEX relations_note ON relations (note_id);
CREATE INDEX relations_target ON relations (target_key);
CREATE VIRTUAL TABLE notes_fts USING fts5 (
    title, permalink, tags, body, private, content='', tokenize='ascii'
);
-- How many notes hold each FTS token (in any column, and in the private one). FTS5 can tell
-- this too (fts5vocab), but only by reading the token's whole doclist: 2.5 ms a query at 10k
-- notes. Kept in step with notes_fts by Batch (a test compares the two).
CREATE TABLE term_df (term TEXT PRIMARY KEY, docs INTEGER NOT NULL, private INTEGER NOT NULL) WITHOUT ROWID;
"""

# The note a relation (r, from note n) points at: by title first, else by permalink. Two lookups
# rather than one OR, so that each can use its index.
_RESOLVED = (
    "coalesce((SELECT t.permalink FROM notes t WHERE t.scope = n.scope AND t.title_key = r.target_key"
    " AND t.error IS NULL ORDER BY t.path LIMIT 1), (SELECT t.permalink FROM notes t WHERE t.scope = n.scope"
    " AND t.permalink = r.target AND t.error IS NULL ORDER BY t.path LIMIT 1))"
)  # columns in _NOTE_COLUMNS; a query's own columns follow them


# Multi-thread mode, not serialized: an Index is used only under its Memory's lock, and its second
# connection only by the one thread that ranks half of a large match while this thread ranks the
# other half, so SQLite's per-connection mutex would guard nothing. Taken and released at every
# step of every statement, and of the statement FTS5 runs for each row's length in bm25(), it
# cost 3 to 8% of a bm25 query at 10k notes (same queries, both modes interleaved).
_OPEN_FLAGS = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_NOMUTEX

# What SQLite raises when the index file is not, or is no longer, a sound database: a disk or a
# copy damaged it. (A locked or unreadable file raises other errors: those are real problems.)
DAMAGED = (apsw.NotADBError, apsw.CorruptError)
BUSY = apsw.BusyError  # still locked by another process after BUSY_TIMEOUT_MS
# What SQLite raises when the index cannot be opened or written now: a read-only or immutable file
# or folder, a full disk, a folder where the file should be. Only a cache: said in one line, and
# the file is opened again at the next call, so that it recovers once it can be written.
UNWRITABLE = (
    apsw.ReadOnlyError,
    apsw.CantOpenError,
    apsw.IOError,
    apsw.FullError,
    apsw.PermissionsError,
    apsw.AuthError,
)
FILE_MODE = 0o600  # the index holds every note's text, sensitive ones too: for its owner only


def _open(path: Path) -> apsw.Connection:
    """A connection that waits for another process's lock from its first statement on, setting
    WAL mode included: it reads the file too, and failed at once while another process held it
    (opening the index, or closing it with a checkpoint). The files are made for their owner
    alone (``FILE_MODE``); SQLite gives the ``-wal`` and ``-shm`` files the main file's mode."""
    _own_files(path)
    db = apsw.Connection(str(path), flags=_OPEN_FLAGS)
    db.set_busy_timeout(BUSY_TIMEOUT_MS)
    return db


def _own_files(path: Path) -> None:
    """Create the index file with ``FILE_MODE``, take group and other access from its files, and
    give its ``-wal`` and ``-shm`` files the main file's owner mode: an index once read-only
    leaves a ``-shm`` of mode 0444 that would fail every later call, long after the index itself
    was made writable again. (A file made read-only on purpose stays so.)"""
    with suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE))
    try:
        main = os.lstat(path)
    except OSError:
        return
    owner = stat.S_IMODE(main.st_mode) & 0o700
    for suffix in ("", "-wal", "-shm"):
        part = f"{path}{suffix}"
        with suppress(OSError):
            st = os.lstat(part)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                wanted = owner if suffix else stat.S_IMODE(st.st_mode) & 0o700
                if stat.S_IMODE(st.st_mode) != wanted:
                    os.chmod(part, wanted)


def _set_wal(db: apsw.Connection) -> None:
    """Put the file in WAL mode. Two processes opening a new file at once both switch it; SQLite
    then answers one of them "busy" at once, without waiting (it could deadlock), and the other is
    done a moment later, so the switch is tried again until the wait runs out."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except BUSY:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def index_file(folder: Path, vault_id: str) -> Path:
    """Where this version keeps the index of the vault ``vault_id``: one file per schema version."""
    version = hashlib.sha256(SCHEMA_VERSION.encode()).hexdigest()[:8]
    return folder / f"{vault_id}-{version}.sqlite"


def remove_stale_versions(folder: Path, vault_id: str) -> None:
    """Remove the index files in ``folder`` of the vault ``vault_id`` kept by other schema versions
    (or named as versions before per-version files named them) that none has touched in
    ``STALE_INDEX_SECONDS``; a file another process removes first is simply gone. Runs at every
    open, so the usual case (this version's file alone) costs one listing and no stat."""
    current = index_file(folder, vault_id).name
    others = [
        n for n in os.listdir(folder) if n.startswith(vault_id) and n.endswith(".sqlite") and n != current
    ]
    now = time.time()
    for name in others:
        parts = [folder / f"{name}{suffix}" for suffix in ("", "-wal", "-shm")]
        times = []
        for part in parts:
            with suppress(FileNotFoundError):
                times.append(part.stat().st_mtime)
        if times and now - max(times) > STALE_INDEX_SECONDS:
            for part in parts:
                part.unlink(missing_ok=True)


class Index:
    """One SQLite file per vault, in WAL mode, under the state directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._second: apsw.Connection | None = None  # for ranking half of a large match, lazily
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:  # say which path is in the way, not how mkdir failed
            raise InvalidInput(f"cannot keep the index in {path.parent}: {exc.strerror}") from exc
        with suppress(OSError):  # the folder holds every note's text: for its owner alone
            if path.parent.stat().st_uid == os.geteuid():
                path.parent.chmod(0o700)
        try:
            self.db = self._connect()
            self._ensure_schema()
        except DAMAGED:
            self.replace()

    def replace(self) -> None:
        """Start a new, empty index file in place of a damaged one: it is only a cache of the files.

        Deleted and made anew rather than emptied in place: dropping tables walks their pages,
        and the damaged ones can be among them.
        """
        with suppress(AttributeError, apsw.Error):  # AttributeError: no connection was made yet
            self.db.close()
        self._close_second()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.db = self._connect()
        self.reset()

    def reopen(self) -> None:
        """Open the file again: after it could not be written, SQLite's connection stays read-only
        even once the file is writable again."""
        with suppress(AttributeError, apsw.Error):
            self.db.close()
        self._close_second()
        self.db = self._connect()
        self._ensure_schema()

    @contextmanager
    def waiting(self, milliseconds: int) -> Iterator[None]:
        """Wait at most ``milliseconds`` for another process's lock meanwhile (instead of
        ``BUSY_TIMEOUT_MS``)."""
        self.db.set_busy_timeout(milliseconds)
        try:
            yield
        finally:
            self.db.set_busy_timeout(BUSY_TIMEOUT_MS)

    def check_writable(self) -> None:
        """Raise one of ``UNWRITABLE`` now if a write could not be indexed: a write checks this
        before it touches a file, so that a failure changes nothing. An index another process
        holds is no reason to refuse: the file is written and the index catches up later."""
        if self.db.in_transaction:
            return
        if self.db.readonly("main"):  # SQLite opened the file read-only: BEGIN alone would pass
            raise apsw.ReadOnlyError("the index file is read-only")
        try:
            with self.waiting(50):
                self.db.execute("BEGIN IMMEDIATE")
        except BUSY:
            return
        self.db.execute("ROLLBACK")

    def _connect(self) -> apsw.Connection:
        # Autocommit, like every APSW connection: transactions are begun explicitly (``transaction``).
        db = _open(self.path)
        _set_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA temp_store=MEMORY")
        # Without a limit the write-ahead log keeps the size of the largest write it ever held
        # (8 MB at 10k notes after a few thousand edits); with one, it is cut back each time a
        # checkpoint lets it start over.
        db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        # FTS5's own count of notes per token, for recounting term_df after a large batch.
        db.execute("CREATE VIRTUAL TABLE temp.vocab_row USING fts5vocab (main, notes_fts, 'row')")
        return db

    def _ensure_schema(self) -> None:
        """Create the schema, or rebuild it when it was made by another version."""
        if self._schema() == SCHEMA_VERSION:
            return
        with self.transaction():
            # Looked at again under the write lock: another process opening the same new file
            # may have made the schema, and indexed notes in it, since the first look.
            if self._schema() != SCHEMA_VERSION:
                self._rebuild()

    def _schema(self) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except apsw.SQLError:
            return None  # no meta table: a new file, or one this program never wrote
        return row[0] if row else None

    def reset(self) -> None:
        """Drop everything and create an empty schema, in the same file and one transaction, so
        that another process with the file open sees the rebuilt index, not a deleted one."""
        with self.transaction():
            self._rebuild()

    def _rebuild(self) -> None:
        """Drop every table and create the schema (inside the caller's transaction)."""
        virtual = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
        for (name,) in self.db.execute(virtual).fetchall():
            self.db.execute(f'DROP TABLE IF EXISTS "{name}"')  # takes its shadow tables with it
        plain = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        for (name,) in self.db.execute(plain).fetchall():
            self.db.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self.db.execute(statement)
        self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.db.close()
        self._close_second()

    def _close_second(self) -> None:
        if self._second is not None:
            with suppress(apsw.Error):
                self._second.close()
            self._second = None

    def checkpoint(self) -> None:
        """After a large rebuild: refresh the query planner's statistics (sampled, a few ms), and
        fold the write-ahead log back into the database, which would otherwise stay as big as
        everything written."""
        self.db.execute("PRAGMA analysis_limit=400")
        self.db.execute("ANALYZE")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def compact(self, *, sparse: float = 0.25) -> bool:
        """Give free pages back to the file system when more than ``sparse`` of the file is free
        (after a rebuild of an index that had grown larger): VACUUM rewrites it, in about half a
        second at 10k notes (44 MB). True if it did."""
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        if free <= sparse * pages:
            return False
        self.db.execute("VACUUM")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; inside another, part of it (the outer one commits or rolls back)."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back already (a damaged file, a full disk)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing --------------------------------------------------------------------------------

    def file_stamps(self) -> dict[str, tuple[int, int]]:
        """Of every file the index has seen: path -> (size, mtime_ns)."""
        return {
            path: (size, mtime)
            for path, size, mtime in self.db.execute("SELECT path, size, mtime_ns FROM notes")
        }

    def digests_of(self, paths: Sequence[str]) -> dict[str, str]:
        """The content hash the index holds for each of ``paths`` it has seen."""
        digests: dict[str, str] = {}
        for chunk in _chunks(paths):
            digests.update(
                self.db.execute(f"SELECT path, hash FROM notes WHERE path IN ({_marks(chunk)})", chunk)
            )
        return digests

    def insert(self, record: NoteRecord) -> None:
        """Put one file's rows in place of whatever the index held for its path."""
        with self.batch() as batch:
            batch.insert(record)

    @contextmanager
    def batch(self, *, recount: bool = False) -> Iterator[Batch]:
        """Insert many files (distinct paths), each table's rows written in batches.

        ``recount``, for a batch that rewrites much of the index: count the notes holding each
        token afresh from FTS5 at the end (0.2 s at 10k notes) rather than file by file (about
        0.15 ms each).
        """
        from .index_batch import Batch  # the write side: a search never needs it

        batch = Batch(self.db, recount=recount)
        yield batch
        batch.close()

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        self.db.execute("UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def remove(self, path: str) -> None:
        with self.batch() as batch:
            batch.remove(path)

    # -- reading --------------------------------------------------------------------------------

    def rows_by_permalink(self, scopes: Sequence[str], permalink: str) -> list[Row]:
        marks = _marks(scopes)
        return _by_path(
            self._rows(
                f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.error IS NULL AND n.scope IN ({marks}) AND n.permalink = ?",
                [*scopes, permalink],
            )
        )

    def keys_by_permalinks(
        self, filters: Filters, permalinks: Sequence[str]
    ) -> list[tuple[int, str, str, float | None, str]]:
        """(id, scope, permalink, modified_ts, path) of the notes holding any of ``permalinks``,
        among those ``filters`` let through: what ranking needs before whole rows are read.
        Looked up by scope and permalink; the filter's own scope test never drives the query."""
        where, params = filters.sql()
        keys: list[tuple[int, str, str, float | None, str]] = []
        for chunk in _chunks(permalinks):
            keys += self.db.execute(
                f"SELECT n.id, n.scope, n.permalink, n.modified_ts, n.path FROM notes n WHERE {where}"
                f" AND n.scope IN ({_marks(filters.scopes)}) AND n.permalink IN ({_marks(chunk)})",
                [*params, *filters.scopes, *chunk],
            ).fetchall()
        return keys

    def rows_by_ids(self, note_ids: Sequence[int]) -> dict[int, Row]:
        """The rows of ``note_ids`` still in the index, by id."""
        rows: dict[int, Row] = {}
        for chunk in _chunks(note_ids):
            sql = f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.id IN ({_marks(chunk)})"
            rows |= {r.id: r for r in self._rows(sql, chunk)}
        return rows

    def rows_by_glob(self, visible: Filters, pattern: str, limit: int) -> list[Row]:
        """Notes whose permalink matches a GLOB ``pattern``, among those ``visible`` lets through."""
        where, params = visible.sql()
        return self._rows(
            f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE {where} AND n.permalink GLOB ?"
            " ORDER BY n.permalink, n.path LIMIT ?",
            [*params, pattern, limit],
        )

    def rows_by_title(self, scopes: Sequence[str], title: str) -> list[Row]:
        marks = _marks(scopes)
        return _by_path(
            self._rows(
                f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.error IS NULL AND n.scope IN ({marks}) AND n.title_key = ?",
                [*scopes, key(title)],
            )
        )

    def row_by_id(self, note_id: int) -> Row | None:
        rows = self._rows(
            f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.error IS NULL AND n.id = ?", [note_id]
        )
        return rows[0] if rows else None

    def keys(self, filters: Filters) -> list[NoteKey]:
        """The notes ``list`` would give, as the few columns that tell whether each may be shown,
        by permalink (a snapshot reads whole rows for the first few only)."""
        where, params = filters.sql()
        sql = (
            "SELECT n.id, n.permalink, n.scope, n.sensitivity, n.expires_ts FROM notes n"
            f" WHERE {where} ORDER BY n.permalink, n.modified_ts DESC, n.path"
        )
        return [NoteKey(*r) for r in self.db.execute(sql, params)]

    def twin_path(self, path: str) -> str | None:
        """The file (a note, or a damaged one) whose path differs from ``path`` only in case, width
        or Unicode form: one file on a case-insensitive drive, and two notes no title could tell
        apart. None if there is none, or ``path`` itself is indexed."""
        wanted = key(path)
        twins = [
            found
            for (found,) in self.db.execute("SELECT path FROM notes WHERE path_hash = ?", (path_hash(path),))
            if key(found) == wanted
        ]
        return None if path in twins else min(twins, default=None)

    def row_by_path(self, path: str) -> Row | None:
        rows = self._rows(f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.error IS NULL AND n.path = ?", [path])
        return rows[0] if rows else None

    def permalinks(self, scope: str) -> Container[str]:
        """The permalinks a note in ``scope`` holds, asked one at a time through the index: a
        write needs a few lookups, and reading a 100,000-note scope's set cost 0.2 s a write."""
        return _Permalinks(self.db, scope)

    # The vault-wide reports below cover only the scopes a caller may see: a file's path is made
    # from its note's title.

    def damaged(self, scopes: Sequence[str]) -> list[tuple[str, str]]:
        # "+scope": the partial index of damaged notes holds the few rows wanted; left to itself,
        # the planner took the scope index and read every note (5 ms at 10k, on every refresh).
        return self.db.execute(
            f"SELECT path, error FROM notes WHERE error IS NOT NULL AND +scope IN ({_marks(scopes)}) ORDER BY path",
            list(scopes),
        ).fetchall()

    def duplicate_permalinks(self, scopes: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
        rows = self.db.execute(
            "SELECT scope, permalink, group_concat(path, char(10)) FROM notes WHERE error IS NULL"
            f" AND scope IN ({_marks(scopes)}) GROUP BY scope, permalink HAVING count(*) > 1 ORDER BY scope, permalink",
            list(scopes),
        ).fetchall()
        return [(permalink, tuple(sorted(paths.split("\n")))) for _scope, permalink, paths in rows]

    def count(self, scopes: Sequence[str]) -> int:
        return self.db.execute(
            f"SELECT count(*) FROM notes WHERE error IS NULL AND scope IN ({_marks(scopes)})", list(scopes)
        ).fetchone()[0]

    def unresolved_count(self, scopes: Sequence[str]) -> int:
        return self.db.execute(
            "SELECT count(*) FROM relations r JOIN notes n ON n.id = r.note_id"
            f" WHERE n.scope IN ({_marks(scopes)}) AND {_RESOLVED} IS NULL",
            list(scopes),
        ).fetchone()[0]

    def unresolved(self, scopes: Sequence[str], limit: int = 200) -> list[tuple[str, str, str]]:
        """(path, relation type, target) of relations whose target no note holds, by path."""
        return self.db.execute(
            "SELECT n.path, r.type, r.target FROM relations r JOIN notes n ON n.id = r.note_id"
            f" WHERE n.scope IN ({_marks(scopes)}) AND {_RESOLVED} IS NULL ORDER BY n.path, r.line LIMIT ?",
            [*scopes, limit],
        ).fetchall()

    def list(self, filters: Filters, limit: int | None) -> list[Row]:
        where, params = filters.sql()
        sql = f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE {where} ORDER BY n.modified_ts DESC, n.permalink, n.path"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._rows(sql, params)

    def lines_of(self, note_id: int, *, include_sensitive: bool = False) -> list[tuple[int, str]]:
        """The note's searchable lines as (file line number, text), sensitive ones only if asked."""
        return self.lines_of_many([note_id], include_sensitive=include_sensitive)[note_id]

    def lines_of_many(
        self, note_ids: Sequence[int], *, include_sensitive: bool = False
    ) -> dict[int, list[tuple[int, str]]]:
        """``lines_of`` each note, by id, in one query."""
        packed: dict[int, bytes] = {}
        if note_ids:
            marks = _marks(note_ids)
            packed = dict(
                self.db.execute(
                    f"SELECT note_id, lines FROM note_lines WHERE note_id IN ({marks})", list(note_ids)
                )
            )
        return {
            i: [(n, t) for n, t, private in unpack_lines(packed.get(i)) if include_sensitive or not private]
            for i in note_ids
        }

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Row]:
        return [Row.from_sql(r) for r in self.db.execute(sql, params)]

    def second_connection(self) -> apsw.Connection:
        """A second connection to the file, opened at first use: for ranking half of a large match
        in a thread while this one ranks the other half (``search.candidates``)."""
        if self._second is None:
            self._second = _open(self.path)
        return self._second


class _Permalinks(Container[str]):
    """``permalink in taken`` for one scope, answered by the (scope, permalink) index."""

    def __init__(self, db: apsw.Connection, scope: str) -> None:
        self.db, self.scope = db, scope

    def __contains__(self, permalink: object) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM notes WHERE scope = ? AND permalink = ? AND error IS NULL LIMIT 1",
                (self.scope, permalink),
            ).fetchone()
            is not None
        )


def path_hash(path: str) -> int:
    """A small number for ``path`` that its twins (``twin_path``) share: its key's CRC-32. Indexed
    in 4 bytes a note, where the key itself would take the length of the path twice."""
    return zlib.crc32(key(path).encode("utf-8"))


def _marks(values: Sized) -> str:
    """SQL placeholders for ``values``: ``?,?,?``."""
    return ",".join("?" * len(values))


def _chunks(values: Sequence[_V]) -> Iterator[list[_V]]:
    """``values`` in runs short enough to bind: SQLite takes at most 32,766 parameters."""
    for start in range(0, len(values), 10_000):
        yield list(values[start : start + 10_000])


def _by_path(rows: list[Row]) -> list[Row]:
    # Sorted here, not by ORDER BY: in SQLite 3.54.1 (APSW's build) ORDER BY with bound parameters
    # made these lookups take 22 instead of 6 microseconds, with no re-prepare counted and even
    # when the index gives the order; 3.40 and 3.51 show no such cost. A lookup finds a row or two.
    return sorted(rows, key=lambda r: r.path) if len(rows) > 1 else rows
