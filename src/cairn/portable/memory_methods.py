"""The export, import and journal calls of ``Memory`` (issue 36); logic in ``cairn.portable`` and ``cairn.journal``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import (
    NotFound,
)
from ..freshness import trusted_mtime as _trusted_mtime  # noqa: F401 - where tests have found it
from ..models import (
    Damaged,
    Note,
)
from ..vault import (
    scope_folder,
)

if TYPE_CHECKING:
    from ..memory import Memory  # noqa: F401

from ..mending import mends_index as _mends_index


class PortableMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    @_mends_index
    def notes_for_export(self, scopes: str | Sequence[str] | None = None) -> tuple[list[Note], list[Damaged]]:
        """Every note of ``scopes`` (default: every allowed scope) read from its file, in path
        order, and the files passed over because they do not parse (or their names are not UTF-8).
        The trash and other dot-folders are not notes and are left out."""
        from . import vault_io

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
        from . import vault_io

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
        from .. import journal

        scope = self._write_scope(scope)
        with self._writing():
            return journal.append_entry(self, scope, text, sensitive=sensitive)

    @_mends_index
    def journal_month(self, month: str, *, scope: str | None = None) -> Note:
        """The journal of ``month`` (``YYYY-MM``). Raises NotFound when it has no entry."""
        from .. import journal

        scope = self._write_scope(scope)
        rel = journal.month_path(scope_folder(scope), journal.check_month(month))
        with self._lock:
            if not (self.vault / rel).is_file():
                raise NotFound(f"no journal for {month} in scope {scope}")
            return self._load(rel)
