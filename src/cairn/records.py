"""A note file turned into the rows the index stores.

Everything here is pure (bytes in, rows out), so that a large refresh can run it in worker
processes while the main process writes to SQLite: parsing and tokenizing are most of the cost
of indexing, and SQLite takes one writer.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import unicodedata
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from . import lifecycle, tokenize
from .errors import DamagedNote
from .models import Note
from .notefile import body_lines, load_note, split_path
from .vault import FileStat, content_hash, iso_to_ts

if TYPE_CHECKING:  # the pool's modules load only when a large refresh needs them (~35 ms)
    from concurrent.futures import Executor

# Of a larger file (hand-written: Cairn writes at most 2 MiB) only this much is indexed: a 50 MB
# note made every search that reached it take seconds. ``doctor`` names such files.
MAX_INDEXED_BYTES = 4 * 1024 * 1024
# Below this many files the worker processes cost more to start than they save.
PARALLEL_AFTER = 400
_CHUNK = 100  # files per task sent to a worker
_COMPACT = (",", ":")  # JSON without the spaces: the index keeps a few of these per note
MAX_ALIASES = 64  # a stranger's file may list thousands; a note is searched by this many


def key(text: str) -> str:
    """Case- and width-insensitive form of a title, tag or relation target, for matching."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """One file as index rows. For a damaged file ``error`` is set and the rows are empty; from
    ``read_record``, rows and error both empty mean the bytes are what the index already holds."""

    path: str
    scope: str
    folder: str
    size: int
    mtime_ns: int  # as the index remembers it (see ``Memory``: -1 for a file still settling)
    digest: str
    error: str | None = None
    # notes columns from permalink to claim_value, in table order
    columns: tuple[object, ...] = ()
    lines: bytes = b""  # pack_lines() of the searchable lines
    observations: bytes | None = None  # pack_observations(), see the note_lines table
    tags: tuple[str, ...] = ()  # keys, distinct
    supersedes: tuple[str, ...] = ()
    # (line, type, target, target key, inline, context, private)
    relations: tuple[tuple[object, ...], ...] = ()
    fts: tuple[str, str, str, str, str] = ("", "", "", "", "")


def note_record(
    path: str,
    data: bytes,
    *,
    size: int,
    mtime_ns: int,
    kept_mtime: int,
    tz: tzinfo,
    digest: str | None = None,
) -> NoteRecord:
    """Parse ``data`` (the file at vault-relative ``path``) into its index rows.

    ``mtime_ns`` is the file's own mtime (it dates a note without ``created``); ``kept_mtime``
    is what the index remembers; ``digest`` is ``content_hash(data)`` if already worked out.
    """
    digest = digest or content_hash(data)
    try:
        note = load_note(path, data, mtime_ns=mtime_ns, tz=tz, version=digest)
    except DamagedNote as exc:
        scope, folder = split_path(path)
        return NoteRecord(path, scope, folder, size, kept_mtime, digest, error=exc.message)
    return rows_of(note, size=size, kept_mtime=kept_mtime, tz=tz)


def rows_of(note: Note, *, size: int, kept_mtime: int, tz: tzinfo) -> NoteRecord:
    """The index rows of a note already parsed (its ``version`` is the file's content hash)."""
    scope, folder = split_path(note.path)
    lines = body_lines(note)
    front = note.frontmatter
    know = lifecycle.knowledge(front)
    observed = {o.line: o for o in note.observations}
    tags = _with_inline_tags(note, lines)
    front_json = json.dumps(front, ensure_ascii=False, default=str, separators=_COMPACT)
    # Read from the JSON the index keeps, as the index reads them back to delete the note's tokens.
    names = aliases(json.loads(front_json)) if "aliases" in front else ()
    columns = (
        note.permalink,
        note.title,
        key(note.title),
        note.type,
        json.dumps(list(tags), ensure_ascii=False, separators=_COMPACT),
        note.created,
        note.modified,
        iso_to_ts(note.created, tz),
        iso_to_ts(note.modified, tz),
        note.origin,
        note.sensitivity,
        front_json,
        lifecycle.expires_at(front, tz),
        know.claim_key if know else None,
        know.claim_value if know else None,
    )
    observations = (
        pack_observations(
            [
                [
                    number,
                    observed[number].category,
                    list(observed[number].tags),
                    observed[number].context,
                    int(private),
                ]
                for number, _text, private in lines
                if number in observed
            ]
        )
        if observed
        else None
    )
    private = {number for number, _text, hidden in lines if hidden}
    relations = tuple(
        (r.line, r.type, r.target, key(r.target), int(r.inline), r.context, int(r.line in private))
        for r in note.relations
    )
    return NoteRecord(
        note.path,
        scope,
        folder,
        size,
        kept_mtime,
        note.version,
        columns=columns,
        lines=pack_lines(lines),
        observations=observations,
        tags=tuple(dict.fromkeys(key(t) for t in tags)),
        supersedes=lifecycle.supersedes(front),
        relations=relations,
        fts=fts_values(note.title, note.permalink, tags, lines, know, names),
    )


def fts_values(
    title: str,
    permalink: str,
    tags: Sequence[str],
    lines: Sequence[tuple[int, str, bool]],
    know: lifecycle.Knowledge | None,
    other_names: Sequence[str] = (),
) -> tuple[str, str, str, str, str]:
    """The tokens of each FTS column: title, permalink, tags, body, private (sensitive lines).
    ``other_names`` (``aliases``) go in the title's column: a note is searched by them as by its title."""
    body = [text for _, text, private in lines if not private]
    if know:
        body.append(know.text())
    stem = tokenize.STEM_ENGLISH
    return (
        _with_symbols(
            tokenize.index_text("\n".join([title, *other_names]), stem=stem), [title, *other_names]
        ),
        " ".join(tokenize.tokens(permalink, stem=stem)),  # a slug: its hyphens join no compound
        tokenize.index_text(" ".join(tags), stem=stem),
        tokenize.index_text("\n".join(body), stem=stem),
        tokenize.index_text("\n".join(text for _, text, private in lines if private), stem=stem),
    )


def _with_symbols(tokens: str, names: Sequence[str]) -> str:
    """A title's tokens and its emoji (``tokenize.symbols``), which only titles are searched by."""
    found = tokenize.symbols(" ".join(names))
    return " ".join([tokens, *found]) if found and tokens else tokens or " ".join(found)


def aliases(front: Mapping[str, object]) -> tuple[str, ...]:
    """The note's other names in front matter, as Obsidian writes them (``aliases: [Bob, 陈工]``,
    or one name as a string); items that are not names (lists, mappings) are passed over."""
    value = front.get("aliases")
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = (str(v).strip() for v in items if isinstance(v, str | int | float) and not isinstance(v, bool))
    return tuple(dict.fromkeys(n for n in names if n))[:MAX_ALIASES]


def _with_inline_tags(note: Note, lines: Sequence[tuple[int, str, bool]]) -> tuple[str, ...]:
    """The note's tags, then the ``#tags`` written in its body as Obsidian reads them: after a
    space or at a line's start, not all digits (``issue #123``), not in code, and not on a
    sensitive line (a tag is shown beside every hit). A URL's ``#anchor`` follows no space."""
    private = {number for number, _text, hidden in lines if hidden}
    first = note.text.count("\n", 0, len(note.text) - len(note.body)) + 1
    held = {key(t) for t in note.tags}
    found: list[str] = []
    fence = ""
    for offset, line in enumerate(note.body.split("\n")):
        if marker := _FENCE.match(line):
            if not fence:
                fence = marker.group(1)[0] * 3
            elif marker.group(1).startswith(fence):
                fence = ""
            continue
        if fence or "#" not in line or first + offset in private:
            continue
        for tag in _INLINE_TAG.findall(_CODE_SPAN.sub(" ", line)):
            tag = tag.rstrip("/-")
            if tag and not tag.isdigit() and key(tag) not in held:
                held.add(key(tag))
                found.append(tag)
    return (*note.tags, *found)


_FENCE = re.compile(r"\s*(```+|~~~+)")
_CODE_SPAN = re.compile(r"(`+).+?\1")
_INLINE_TAG = re.compile(r"(?<!\S)#([\w/-]+)")


def _pack(value: object) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=_COMPACT).encode(), 6)


def pack_lines(lines: Sequence[tuple[int, str, bool]]) -> bytes:
    """A note's searchable lines (``body_lines``: 1-based numbers, stripped one-line texts),
    compressed: kept once, for snippets, ranking and FTS deletes.

    Plain text, not JSON: the line numbers on the first line (negative for a sensitive line),
    then each text on a line of its own. Every search reads back the lines of its hits, and this
    form packs in two thirds of JSON's time and reads back in half of it.
    """
    numbers = " ".join([str(-n if private else n) for n, _, private in lines])
    return zlib.compress("\n".join([numbers, *[text for _, text, _ in lines]]).encode(), 6)


def unpack_lines(packed: bytes | None) -> list[tuple[int, str, bool]]:
    if not packed:
        return []
    numbers, *texts = zlib.decompress(packed).decode().split("\n")
    return [(abs(int(n)), text, n[0] == "-") for n, text in zip(numbers.split(), texts, strict=True)]


def pack_observations(observations: Sequence[Sequence[object]]) -> bytes:
    """[[line, category, [tags], context, sensitive], ...], compressed: half the size of its JSON
    (4.2 to 2.0 MB at 10,000 generated notes, where the JSON was a tenth of the index)."""
    return _pack(observations)


def unpack_observations(packed: bytes | None) -> list[list[object]]:
    return json.loads(zlib.decompress(packed)) if packed else []


# -- many files at once ---------------------------------------------------------------------------

ReadResult = NoteRecord | None  # None: the file went away before it could be read
# What to read: the file's stat, the mtime the index will keep, and the hash the index holds
# of it (None for a new file). A file whose bytes still have that hash is not parsed again.
Work = tuple[FileStat, int, str | None]


def read_record(
    vault: Path, st: FileStat, kept_mtime: int, tz: tzinfo, known: str | None = None
) -> ReadResult:
    """The file's rows; only its hash (an empty record) when its bytes still hash to ``known``.

    The file is opened once, never through a symbolic link (one swapped in since the scan is
    treated as gone). Of a file over ``MAX_INDEXED_BYTES`` only that much is parsed, cut at a
    line's end; its hash covers every byte, so that a change anywhere is seen.
    """
    from .errors import NotFound
    from .fileio import open_file

    try:
        fd = open_file(vault, st.path)
    except (NotFound, IsADirectoryError):
        return None
    with open(fd, "rb") as file:
        data = file.read(MAX_INDEXED_BYTES + 1)
        if len(data) > MAX_INDEXED_BYTES:
            whole = hashlib.sha256(data)
            while chunk := file.read(1 << 20):
                whole.update(chunk)
            data = data[: data.rfind(b"\n", 0, MAX_INDEXED_BYTES) + 1 or MAX_INDEXED_BYTES]
            digest = "sha256:" + whole.hexdigest()
        else:
            digest = content_hash(data)
    if digest == known:
        scope, folder = split_path(st.path)
        return NoteRecord(st.path, scope, folder, st.size, kept_mtime, known)
    return note_record(
        st.path, data, size=st.size, mtime_ns=st.mtime_ns, kept_mtime=kept_mtime, tz=tz, digest=digest
    )


def _read_chunk(vault: Path, chunk: Sequence[Work], tz: tzinfo) -> list[ReadResult]:
    return [read_record(vault, st, kept, tz, known) for st, kept, known in chunk]


def read_records(vault: Path, work: Sequence[Work], tz: tzinfo) -> Iterator[ReadResult]:
    """``read_record`` for each piece of work, in order.

    Many files are read in forked worker processes, one per CPU: forked, because spawned ones
    would re-run the caller's main script. A process that runs other threads is never forked
    (a lock another thread holds would stay locked in the child); it reads the files itself.
    """
    workers = min(os.cpu_count() or 1, 4)
    parallel = len(work) >= PARALLEL_AFTER and workers >= 2 and threading.active_count() == 1
    pool = _forked_pool(workers) if parallel else None
    done = 0
    if pool is not None:
        from concurrent.futures.process import BrokenProcessPool

        chunks = [work[i : i + _CHUNK] for i in range(0, len(work), _CHUNK)]
        try:
            with pool:
                for results in pool.map(_read_chunk, [vault] * len(chunks), chunks, [tz] * len(chunks)):
                    for result in results:
                        done += 1
                        yield result
        except BrokenProcessPool:  # a worker died (killed, out of memory): the rest is read here
            pass
    for st, kept, known in work[done:]:  # few files, no fork here, or what a dead worker left
        yield read_record(vault, st, kept, tz, known)


def _forked_pool(workers: int) -> Executor | None:
    # Imported here: a one-shot command that finds nothing changed should not pay for them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    except OSError:
        return None
