"""The one error tree of Cairn.

    CairnError                 every error a face may show to a person or a model
    +-- InvalidInput           bad title, scope, filter, date, observation syntax ...
    +-- NotFound               no note with that permalink (or it is in the trash)
    +-- AlreadyExists          a note with that title exists and overwrite was not asked for
    +-- EditMismatch           find/replace text missing, or found a different number of times
    +-- DamagedNote            the file does not parse; it is left exactly as it is
    +-- ScopeDenied            the caller may not touch that scope
    +-- SecretRefused          the content holds a credential or an unmarked ID number
    +-- Conflict               the file changed under us; nothing was written
    +-- Busy                   another process held the index for longer than Cairn waits
    +-- IndexUnavailable       the index cannot be opened or written (read-only, a folder, full)
    +-- FolderUnwritable       a vault folder cannot be written (read-only, immutable, full)
    +-- StoreError             a remote (stores/base.py): PreconditionFailed, AuthFailed, Unreachable ...
    +-- InboxFull              observations_max open observations: a dream must handle some first
    +-- DreamOff               the scope's dream is switched off (dream.json)
    +-- DreamRunError          the dream model could not be reached or answered nonsense
    +-- ApprovalRefused        an agent-facing face asked to decide a proposal: only a person does

Faces catch ``CairnError`` only, print ``message`` and exit with ``exit_code``.
Library errors are translated at the edge with ``raise CairnError(...) from exc``.
"""

from __future__ import annotations


class CairnError(Exception):
    """Base of every error Cairn raises on purpose."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(CairnError):
    code = "invalid_input"
    exit_code = 2


class NotFound(CairnError):
    code = "not_found"
    exit_code = 3


class AlreadyExists(CairnError):
    code = "already_exists"
    exit_code = 4


class EditMismatch(CairnError):
    code = "edit_mismatch"
    exit_code = 5


class DamagedNote(CairnError):
    code = "damaged"
    exit_code = 6


class ScopeDenied(CairnError):
    code = "scope_denied"
    exit_code = 7


class SecretRefused(CairnError):
    code = "secret_refused"
    exit_code = 8


class Conflict(CairnError):
    code = "conflict"
    exit_code = 9


class Busy(CairnError):
    code = "busy"
    exit_code = 10


class IndexUnavailable(CairnError):
    code = "index_unavailable"
    exit_code = 11


class FolderUnwritable(CairnError):
    code = "folder_unwritable"
    exit_code = 12


class InboxFull(CairnError):
    code = "inbox_full"
    exit_code = 16


class DreamOff(CairnError):
    code = "dream_off"
    exit_code = 17


class DreamRunError(CairnError):
    code = "dream_failed"
    exit_code = 18


class ApprovalRefused(CairnError):
    code = "approval_refused"
    exit_code = 19
