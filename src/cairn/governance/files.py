"""The files of a scope that governance reads and writes: revs, safe reads, create-only writes and
compare-and-swap commits.

A ``rev`` is the content hash of a file's bytes (``sha256:<hex>``), as a note's ``version`` is.
Every write of a dream is a ``Change`` that names the rev the file must still have; ``commit``
re-reads each target right before writing it, so a file changed since the plan is never overwritten.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Container, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, InvalidInput, NotFound
from ..vault import atomic_write, content_hash, inside_vault, load_config, scope_folder

if TYPE_CHECKING:
    from ..memory import Memory

MAX_FILE_BYTES = 2 * 1024 * 1024  # as Memory's notes: a bigger file is not read as memory
INBOX = "inbox"
ARCHIVED = "archived"
SECTIONS = "sections"
LOG_FILE = "log.md"
INDEX_FILE = "index.md"
DREAM_FILE = "dream.json"
# Folders of a scope that hold no entities: a dream neither lists nor upserts notes there.
NOT_ENTITIES = (INBOX, SECTIONS, "proposals", "journal")


class RevConflict(Conflict):
    """A target changed since it was loaded (or appeared, or went away): nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} changed since it was loaded; load again and decide on what is there now")
        self.path = path


@dataclass(frozen=True)
class Place:
    """One scope of one vault, with what governance needs of the ``Memory`` that opened it.

    ``writing`` serialises writers (threads, and processes on this machine: Memory's lock);
    ``taken`` gives the permalinks used in the scope, for a new entity's permalink.
    """

    memory: Memory
    vault: Path
    scope: str
    tz: tzinfo
    origin: str
    home: Path
    writing: Callable[[], AbstractContextManager[Any]]
    taken: Callable[[], Container[str]]

    @property
    def folder(self) -> str:
        return scope_folder(self.scope)

    def rel(self, *parts: str) -> str:
        return "/".join([self.folder, *parts])

    def path(self, rel: str) -> Path:
        return self.vault / rel

    def setting(self, name: str, default: int, *, least: int) -> int:
        """An integer setting from cairn.toml (read at each call: an edit applies at once)."""
        value = load_config(self.vault).extra.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidInput(
                f"{self.vault / 'cairn.toml'}: {name} must be a whole number of at least {least}"
            )
        return value


def note_files(folder: Path) -> list[str]:
    """The names of the ``.md`` files right in ``folder`` (no hidden ones, no links), sorted;
    none when the folder is missing."""
    try:
        return sorted(
            e.name
            for e in os.scandir(folder)
            if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file(follow_symlinks=False)
        )
    except (FileNotFoundError, NotADirectoryError):
        return []


def read_bytes(vault: Path, rel: str) -> bytes | None:
    """The bytes of ``rel``, or None when there is no such file.

    Raises:
        InvalidInput: the file is reached through a symbolic link, or is too big to be memory.
    """
    from ..fileio import Linked, read_file

    try:
        data, _st = read_file(vault, rel, limit=MAX_FILE_BYTES + 1)
    except Linked as exc:
        raise InvalidInput(exc.message) from exc
    except NotFound:
        return None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{rel} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data


def current_rev(vault: Path, rel: str) -> str | None:
    data = read_bytes(vault, rel)
    return None if data is None else content_hash(data)


def create_exclusive(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, or raise FileExistsError; never overwrite, never half-written.

    The bytes go to a temp file first, which is then hard-linked to the name: the link fails if
    the name exists, and a reader (or a sync) sees the whole file or none. Where a file system
    has no hard links, ``O_EXCL`` creates the name directly.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name[:50]}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with open(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@dataclass(frozen=True)
class Change:
    """One file a decision writes: the rev it must still have (None: it must not exist yet) and
    its new bytes (None: it is removed)."""

    path: str
    expected: str | None
    data: bytes | None

    @property
    def action(self) -> str:
        if self.data is None:
            return "remove"
        return "create" if self.expected is None else "replace"


def check(vault: Path, changes: Sequence[Change]) -> None:
    """Raise RevConflict for the first change whose target is not as it expects."""
    for change in changes:
        if current_rev(vault, change.path) != change.expected:
            raise RevConflict(change.path)


def commit(vault: Path, changes: Sequence[Change]) -> None:
    """Write ``changes`` if every target is still as expected; raise RevConflict before writing
    anything otherwise. Each target is checked again right before its own write (a person's
    editor takes no lock), and files are created before any is removed, so an archived
    observation exists before its inbox copy goes."""
    check(vault, changes)
    ordered = [c for c in changes if c.data is not None] + [c for c in changes if c.data is None]
    for change in ordered:
        path = vault / change.path
        if not inside_vault(vault, path):
            raise InvalidInput(
                f"{change.path} is reached through a symbolic link, which Cairn does not follow"
            )
        if change.expected is None:
            try:
                create_exclusive(path, change.data or b"")
            except FileExistsError as exc:
                raise RevConflict(change.path) from exc
            continue
        if current_rev(vault, change.path) != change.expected:
            raise RevConflict(change.path)
        if change.data is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            atomic_write(path, change.data)
