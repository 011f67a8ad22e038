"""Proposals on notes: ``add`` (a new note), ``replace`` (write over, append, edit) and ``remove``
(a soft delete), as an agent asks for them in approval mode.

A proposal runs the very write it stands for (``writes.write``, ``append``, ``edit``) with a
committer that records the change instead of writing it: every check of a direct write (titles,
lines, the secret guard, an edit's expected count) applies when it is proposed, and the text in
the proposal is exactly the text approval writes. Approval re-reads the target under the write
lock and writes only if its version is unchanged (for ``add``: only if the path is still free).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import checks, trash, writes
from ..errors import DamagedNote, InvalidInput
from ..models import Note
from ..notefile import load_note
from ..vault import content_hash, scope_folder
from . import proposals
from .files import Place, read_bytes
from .proposals import Proposal, ProposalConflict

if TYPE_CHECKING:
    from ..memory import Memory

ACTIONS = ("write", "append", "edit", "delete", "note")


class _Capture:
    """A ``writes.Committer`` that works out the change on the file as it is and keeps it."""

    rel: str = ""
    old: Note | None = None
    text: str = ""

    def __call__(self, mem: Memory, rel: str, change: writes.Change) -> Note:
        data = read_bytes(mem.vault, rel)
        old = load_note(rel, data, tz=mem.tz) if data is not None else None
        text = change(old)
        try:
            new = load_note(rel, text.encode("utf-8"), tz=mem.tz)
        except DamagedNote as exc:
            raise InvalidInput(f"{exc.message}; nothing was proposed") from None
        self.rel, self.old, self.text = rel, old, text
        return new


def propose(mem: Memory, place: Place, action: str, *args: Any, via: str, **kwargs: Any) -> dict[str, Any]:
    """Make the proposal for ``action`` (``write``, ``append``, ``edit``, ``delete`` with the
    arguments of the ``Memory`` method of that name, or ``note``: a whole note text for import,
    ``(path in the scope, text)``) and return the agent's answer (``proposals.answer``).

    Raises what the direct write would raise before writing (InvalidInput, AlreadyExists,
    NotFound, EditMismatch, SecretRefused ...): nothing is proposed then.
    """
    if action not in ACTIONS:
        raise InvalidInput(f"cannot propose {action!r}: use one of {', '.join(ACTIONS)}")
    scope = place.scope
    capture = _Capture()
    extra: dict[str, Any] = {}
    if action == "write":
        writes.write(mem, scope, *args, committer=capture, **_write_defaults(kwargs))
    elif action == "append":
        writes.append(mem, scope, *args, committer=capture)
    elif action == "edit":
        permalink, find, replace_with = args
        writes.edit(
            mem, scope, permalink, find, replace_with, int(kwargs.get("expected", 1)), committer=capture
        )
    elif action == "delete":
        (permalink,) = args
        reason = kwargs.get("reason")
        with mem._writing():
            note = mem._note_for_update(permalink, scope)
        if reason:
            checks.check_secrets(reason, sensitive=note.sensitive, where="reason")
            extra["reason"] = reason.strip()
        capture.rel, capture.old, capture.text = note.path, note, ""
    else:
        capture = _imported(mem, place, *args)
    old = capture.old
    kind = "remove" if action == "delete" else "add" if old is None else "replace"
    if old is not None and action != "delete" and old.text == capture.text:
        raise proposals.Unchanged(f"{capture.rel} already holds exactly that text; nothing to propose")
    note = old if old is not None else load_note(capture.rel, capture.text.encode("utf-8"), tz=mem.tz)
    extra["permalink"] = note.permalink
    extra["title"] = note.title
    proposal = proposals.create(
        place,
        kind=kind,
        target=capture.rel,
        version=old.version if old is not None else None,
        via=via,
        diff=proposals.unified(old.text if old else "", capture.text, capture.rel),
        summary=_summary(action, note, args),
        text=capture.text if kind != "remove" else None,
        extra=extra,
    )
    out = proposals.answer(proposal)
    if note.sensitive:  # the agent may not see a sensitive note's text through the diff
        out["diff"] = "(hidden: the note is sensitive; a person sees the diff in cairn proposals show)"
    return out


def _write_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``Memory.write``'s keyword defaults, for ``writes.write`` which takes them all."""
    defaults: dict[str, Any] = {
        "body": "",
        "type": "note",
        "folder": "",
        "tags": (),
        "observations": (),
        "relations": (),
        "fields": None,
        "sensitivity": None,
        "overwrite": False,
    }
    unknown = set(kwargs) - set(defaults)
    if unknown:
        raise InvalidInput(f"write takes no {', '.join(sorted(unknown))}")
    return defaults | kwargs


def _imported(mem: Memory, place: Place, path: str, text: str) -> _Capture:
    """An imported note's text, checked as ``put_notes`` checks it, against what is there."""
    from ..portable import vault_io

    ((_scope, note, text),) = vault_io.plan(mem, [(place.scope, path, text)])
    capture = _Capture()
    data = read_bytes(mem.vault, note.path)
    capture.rel, capture.text = note.path, text
    capture.old = load_note(note.path, data, tz=mem.tz) if data is not None else None
    return capture


def _summary(action: str, note: Note, args: tuple[Any, ...]) -> str:
    if action == "append" and len(args) > 1:
        return f"append to {note.title}: {' '.join(str(args[1]).split())[:200]}"
    return f"{action} {note.title}"


def commit(place: Place, proposal: Proposal) -> dict[str, Any]:
    """Write an approved note proposal if its target is as it was; the caller holds the lock.

    Raises:
        ProposalConflict: the target changed, went away, or (``add``) appeared meanwhile.
    """
    mem = place.memory
    rel = proposal.target
    if not rel.startswith(scope_folder(place.scope) + "/"):
        raise InvalidInput(f"proposal {proposal.id}: its target {rel} is not in scope {place.scope}")
    data = read_bytes(mem.vault, rel)
    now = content_hash(data) if data is not None else None
    if proposal.kind == "remove":
        if now != proposal.version:
            raise ProposalConflict(_moved(rel, proposal.version, now))
        note = trash.delete_held(mem, place.scope, rel, proposal.extra.get("reason"))
        return {"written": note.path}
    text = proposal.text
    if text is None:
        raise InvalidInput(f"proposal {proposal.id} holds no text to write")
    if now is not None and now == content_hash(text.encode("utf-8")):
        return {"written": rel, "already": True}  # written before a crash cut the decision short
    if now != proposal.version:
        raise ProposalConflict(_moved(rel, proposal.version, now))

    def change(old: Note | None) -> str:
        if (old.version if old is not None else None) != proposal.version:
            raise ProposalConflict(_moved(rel, proposal.version, old.version if old else None))
        return text

    writes.commit(mem, rel, change)
    return {"written": rel}


def _moved(rel: str, then: str | None, now: str | None) -> str:
    if then is None:
        return f"{rel} was made by someone else since the proposal; nothing was written"
    if now is None:
        return f"{rel} is gone since the proposal was made; nothing was written"
    return f"{rel} changed since the proposal was made; nothing was written (propose again)"


def commit_any(place: Place, proposal: Proposal) -> dict[str, Any]:
    """The commit of ``proposal``'s kind: a note's, or a whole dream's."""
    if proposal.kind == "dream":
        from . import proposal_dream

        return proposal_dream.commit(place, proposal)
    return commit(place, proposal)
