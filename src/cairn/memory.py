"""The Memory service: the one engine that the CLI, the MCP server and the Python API call."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .models import Context, DoctorReport, Hit, Note, NoteSummary, RefreshReport

Progress = Callable[[int, int], None]  # (done, total)


class Memory:
    """A vault of Markdown notes and its rebuildable SQLite index.

    Open with ``Memory.open(path)``; use as a context manager or call ``close()``.
    Every read call first notices changes made to the files by anyone (stat, then hash).
    """

    @classmethod
    def open(
        cls,
        vault: str | Path | None = None,
        *,
        home: str | Path | None = None,
        scope: str = "user",
        allow_scopes: Sequence[str] | None = None,
        origin: str | None = None,
    ) -> Memory:
        """Open (creating if needed) the vault at ``vault``.

        Args:
            vault: vault folder; default ``$CAIRN_VAULT`` or ``<home>/vault``.
            home: state directory for the index and tokens; default ``$CAIRN_HOME`` or ``~/.cairn``.
            scope: default scope of calls that do not name one (``user``, ``agent:<id>``, ...).
            allow_scopes: scopes this caller may touch; default from ``cairn.toml``, else ``["user"]``.
            origin: name recorded in ``origin`` on every write (default: the host name).
        """
        raise NotImplementedError

    def close(self) -> None: ...

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes -------------------------------------------------------------------------------

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
        ``"type [[Target]] (context)"`` strings. Raises AlreadyExists when a note with the same
        title exists in the folder and ``overwrite`` is false; InvalidInput on bad syntax.
        """
        raise NotImplementedError

    def append(self, permalink: str, line: str, *, scope: str | None = None) -> Note:
        """Add one observation (``[cat] text``) or relation (``type [[Target]]``) to a note.

        Raises NotFound when no such note exists (never creates one).
        """
        raise NotImplementedError

    def edit(self, permalink: str, find: str, replace: str, *, expected: int = 1, scope: str | None = None) -> Note:
        """Literal find/replace in the note's text. Raises EditMismatch (and changes nothing)
        when ``find`` occurs a number of times other than ``expected``."""
        raise NotImplementedError

    def delete(self, permalink: str, *, reason: str | None = None, scope: str | None = None) -> Note:
        """Soft delete: move the file into ``<scope>/.trash/``; ``restore`` brings it back."""
        raise NotImplementedError

    def restore(self, permalink: str, *, scope: str | None = None) -> Note:
        raise NotImplementedError

    # -- reads --------------------------------------------------------------------------------

    def read(self, identifier: str, *, scope: str | None = None) -> Note:
        """Read by permalink, ``memory://permalink`` or vault-relative path."""
        raise NotImplementedError

    def list(
        self,
        *,
        folder: str | None = None,
        tag: str | None = None,
        type: str | None = None,
        include_sensitive: bool = True,
        limit: int | None = None,
        scope: str | None = None,
    ) -> list[NoteSummary]:
        raise NotImplementedError

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
        limit: int = 10,
        scope: str | None = None,
    ) -> list[Hit]:
        """Keyword + structure search (DESIGN section 4).

        ``since``/``until`` bound ``modified`` (ISO date/time or ``7d``, ``12h``, ``2w``);
        ``where`` filters front-matter fields: ``{"status": "active"}`` or
        ``{"confidence": {"$gt": 0.7}}`` with ``$gt $gte $lt $lte $in $ne``.
        An empty query lists the filtered notes, newest first.
        """
        raise NotImplementedError

    def context(
        self, url: str, *, depth: int = 1, timeframe: str | None = None, scope: str | None = None
    ) -> Context:
        """Notes named by ``memory://permalink`` (``*`` wildcards allowed) and what their
        relations reach within ``depth`` hops, in both directions; ``timeframe`` (``7d``, ISO date)
        keeps related notes modified since then."""
        raise NotImplementedError

    # -- maintenance --------------------------------------------------------------------------

    def refresh(self) -> RefreshReport:
        """Bring the index up to date with the files (only changed files are parsed)."""
        raise NotImplementedError

    def reindex(self, progress: Progress | None = None) -> RefreshReport:
        """Drop the index and rebuild it from the files."""
        raise NotImplementedError

    def doctor(self) -> DoctorReport:
        raise NotImplementedError

    def status(self) -> dict[str, Any]:
        """Vault path, index path, scope, allowed scopes, counts."""
        raise NotImplementedError
