"""Changing notes: each method checks its scope and hands the change to ``writes`` or ``trash``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from . import trash, writes
from .mending import mends_index as _mends_index
from .models import (
    Note,
)


class WriteMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

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

    @_mends_index
    def replace_text(self, permalink: str, text: str, if_version: str, *, scope: str | None = None) -> Note:
        """Replace a note's whole text, only if its file is still at ``if_version`` (``Note.version``).

        Raises:
            Conflict: the file changed since that version was read; nothing is written.
            InvalidInput: the text would not parse as a note, or is too large.
            SecretRefused: a new line holds a credential.
        """
        return writes.replace_text(self, self._write_scope(scope), permalink, text, if_version)
