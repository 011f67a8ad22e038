"""Rows of many files on their way into the index (``Index.batch``): the write side of the index."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import apsw

from . import lifecycle
from .index import _marks, path_hash
from .records import NoteRecord, aliases, fts_values, unpack_lines

_Columns = Sequence[str]  # what a note's FTS5 columns hold: title, permalink, tags, body, private


def _all_tokens(columns: _Columns | None) -> set[str]:
    return set(" ".join(columns).split()) if columns else set()


def _private_tokens(columns: _Columns | None) -> set[str]:
    return set(columns[-1].split()) if columns and columns[-1] else set()


# The notes columns a file's record sets, in table order after the id.
_NOTE_FIELDS = (
    "path", "path_hash", "scope", "folder", "size", "mtime_ns", "hash", "error", "permalink", "title",
    "title_key", "type", "tags", "created", "modified", "created_ts", "modified_ts", "origin",
    "sensitivity", "frontmatter", "expires_ts", "claim_key", "claim_value",
)  # fmt: skip
_RELATION_FIELDS = "line, type, target, target_key, inline, context, private"


def _note_values(record: NoteRecord) -> tuple[object, ...]:
    """``record``'s notes row in ``_NOTE_FIELDS`` order (a damaged file's has only its head)."""
    head = (
        record.path,
        path_hash(record.path),
        record.scope,
        record.folder,
        record.size,
        record.mtime_ns,
        record.digest,
        record.error,
    )
    if record.error is not None:
        return head + (None,) * (len(_NOTE_FIELDS) - len(head))
    return head + tuple(record.columns)


class Batch:
    """Rows of many files on their way into the index: the notes row at once (its id is needed),
    the rest of each table in one ``executemany`` per few hundred files, and the change to each
    token's note count (``term_df``) once, at ``close``."""

    SIZE = 256  # files per flush

    def __init__(self, db: apsw.Connection, *, recount: bool = False) -> None:
        self.db = db
        self.recount = recount
        self.files = 0
        self.supersedes: list[tuple[object, ...]] = []
        self.tags: list[tuple[object, ...]] = []
        self.relations: list[tuple[object, ...]] = []
        self.fts: list[tuple[object, ...]] = []
        self.docs: Counter[str] = Counter()  # change in notes holding each token
        self.private: Counter[str] = Counter()  # the same, in the private column

    def insert(self, record: NoteRecord) -> None:
        """Put one file's rows in place of what the index held for its path (paths in one batch
        are distinct: a removed row is never one still waiting to be flushed)."""
        values = _note_values(record)
        old = self._held(record.path)
        if old is None:
            self._count(None, None if record.error is not None else record.fts)
            self.db.execute(
                f"INSERT INTO notes ({', '.join(_NOTE_FIELDS)}) VALUES ({_marks(_NOTE_FIELDS)})", values
            )
            self._add_rows(self.db.last_insert_rowid(), record)
            return
        # A changed file keeps its note's id and every row that did not change: a hand edit
        # rewrote only its notes row's size, mtime and hash, not the nine index entries and the
        # tag and relation rows that hold the same values (about 25 pages of write-ahead log a
        # note, most of what a small refresh wrote). Kept ids also keep the pages from growing:
        # after 4,000 hand edits of a 10k vault the file grew by 19 % with new ids, 12 % with kept.
        note_id, before, packed = old[0], old[1:-1], old[-1]
        new_fts = None if record.error is not None else record.fts
        old_fts = self._fts_of(before, packed)
        fts_changed = old_fts != new_fts
        if fts_changed:
            self._count(old_fts, new_fts)
            if old_fts is not None:
                self._delete_fts(note_id, old_fts)
        changed = [
            (name, new) for name, was, new in zip(_NOTE_FIELDS, before, values, strict=True) if was != new
        ]
        if changed:
            self.db.execute(
                f"UPDATE notes SET {', '.join(f'{name} = ?' for name, _ in changed)} WHERE id = ?",
                [*(new for _, new in changed), note_id],
            )
        self._add_rows(note_id, record, kept=True, fts=fts_changed)

    def _add_rows(self, note_id: int, record: NoteRecord, *, kept: bool = False, fts: bool = True) -> None:
        """The rows of ``record`` beside its notes row; ``kept``: the note had rows already;
        ``fts``: its FTS5 row is to be written (it is not there, or was just deleted)."""
        side = (
            ("supersedes", "target", [(t,) for t in record.supersedes], self.supersedes),
            ("note_tags", "tag", [(t,) for t in record.tags], self.tags),
            ("relations", _RELATION_FIELDS, [tuple(r) for r in record.relations], self.relations),
        )
        for table, fields, rows, pending in side:
            if kept:
                held = self.db.execute(
                    f"SELECT {fields} FROM {table} WHERE note_id = ? ORDER BY rowid", (note_id,)
                )
                if held.fetchall() == rows:
                    continue
                self.db.execute(f"DELETE FROM {table} WHERE note_id = ?", (note_id,))
            pending += [(note_id, *row) for row in rows]
        if record.error is not None:
            if kept:
                self.db.execute("DELETE FROM note_lines WHERE note_id = ?", (note_id,))
            return
        self.db.execute(
            "INSERT OR REPLACE INTO note_lines VALUES (?, ?, ?)", (note_id, record.lines, record.observations)
        )
        if fts:
            self.fts.append((note_id, *record.fts))
            self.files += 1
            if self.files >= self.SIZE:
                self.flush()

    def remove(self, path: str) -> None:
        """Forget the file at ``path``, if the index holds it."""
        row = self._held(path)
        if row is None:
            return
        note_id, old_fts = row[0], self._fts_of(row[1:-1], row[-1])
        self._count(old_fts, None)
        if old_fts is not None:
            self._delete_fts(note_id, old_fts)
        for table in ("note_tags", "relations", "supersedes", "note_lines"):
            self.db.execute(f"DELETE FROM {table} WHERE note_id = ?", (note_id,))
        self.db.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def _held(self, path: str) -> tuple[Any, ...] | None:
        """The notes row of ``path`` as (id, *``_NOTE_FIELDS``, packed lines), if the index has one."""
        return self.db.execute(
            f"SELECT id, {', '.join(_NOTE_FIELDS)}, (SELECT lines FROM note_lines WHERE note_id = id)"
            " FROM notes WHERE path = ?",
            (path,),
        ).fetchone()

    @staticmethod
    def _fts_of(values: Sequence[Any], packed: bytes | None) -> _Columns | None:
        """What a note's FTS5 columns hold, worked out again from its notes row (``values``, in
        ``_NOTE_FIELDS`` order) and packed lines; None for a damaged file's row, which has none."""
        row = dict(zip(_NOTE_FIELDS, values, strict=True))
        if row["error"] is not None:
            return None
        front = json.loads(row["frontmatter"] or "{}")
        know = lifecycle.knowledge(front)
        tags = tuple(json.loads(row["tags"] or "[]"))
        return fts_values(row["title"], row["permalink"], tags, unpack_lines(packed), know, aliases(front))

    def _delete_fts(self, note_id: int, columns: _Columns) -> None:
        # Contentless FTS5 forgets a row only when given back exactly the tokens it indexed.
        self.db.execute(
            "INSERT INTO notes_fts (notes_fts, rowid, title, permalink, tags, body, private)"
            " VALUES ('delete', ?, ?, ?, ?, ?, ?)",
            (note_id, *columns),
        )

    def _count(self, old: _Columns | None, new: _Columns | None) -> None:
        """Record a note's FTS columns changing from ``old`` to ``new`` (None: no note)."""
        pairs = [(self.private, _private_tokens(old), _private_tokens(new))]
        if not self.recount:  # private ones are counted even then: few notes have any, and FTS5
            # could count them only by reading every column's list of every token
            pairs.append((self.docs, _all_tokens(old), _all_tokens(new)))
        for counter, before, after in pairs:
            if before != after:
                counter.update(after - before)
                counter.subtract(before - after)

    def flush(self) -> None:
        for sql, rows in (
            ("INSERT INTO supersedes VALUES (?, ?)", self.supersedes),
            ("INSERT INTO note_tags VALUES (?, ?)", self.tags),
            ("INSERT INTO relations VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self.relations),
            (
                "INSERT INTO notes_fts (rowid, title, permalink, tags, body, private) VALUES (?, ?, ?, ?, ?, ?)",
                self.fts,
            ),
        ):
            if rows:
                self.db.executemany(sql, rows)
                rows.clear()
        self.files = 0

    def close(self) -> None:
        self.flush()
        if self.recount:
            private = dict(self.db.execute("SELECT term, private FROM term_df WHERE private != 0").fetchall())
            self.db.execute("DELETE FROM term_df")
            self.db.execute("INSERT INTO term_df SELECT term, doc, 0 FROM temp.vocab_row")
            self.private.update(private)
            self.db.executemany(
                "UPDATE term_df SET private = ? WHERE term = ?",
                [(n, t) for t, n in self.private.items() if n],
            )
        else:
            terms = self.docs.keys() | self.private.keys()
            changed = [(t, self.docs[t], self.private[t]) for t in terms if self.docs[t] or self.private[t]]
            self.db.executemany(
                "INSERT INTO term_df VALUES (?, ?, ?) ON CONFLICT (term)"
                " DO UPDATE SET docs = docs + excluded.docs, private = private + excluded.private",
                changed,
            )
            self.db.executemany(
                "DELETE FROM term_df WHERE term = ? AND docs <= 0", [(t,) for t, n, _ in changed if n < 0]
            )
        self.docs.clear()
        self.private.clear()
