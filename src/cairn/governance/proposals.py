"""Approval mode (issue 35 item 5, seed 004): a change an agent asks for waits as a proposal in
``<scope>/proposals/<id>.md`` until a person approves or rejects it.

A proposal file is front matter (everything a decision needs: the kind, the target and the
version it was based on, the full proposed text, the diff, who asked, when, the expiry) and a
body that shows the diff to a person reading the file. It is made once (a pure create) and
rewritten only to record the decision, under the vault's write lock. The scan passes the folder
over (``vault.GENERATED_FOLDERS``), so a change nobody approved is never found as memory.

Decisions are final and idempotent: deciding a decided proposal again changes nothing and
answers with the decision already taken. Approval commits only if the target is still as the
proposal saw it (compare-and-swap); otherwise the proposal becomes ``conflicted`` and nothing is
written. Every decision is appended to ``<scope>/log.md``. What a kind writes is in
``proposal_notes`` (notes) and ``proposal_dream`` (a dream's decisions as one proposal).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..errors import CairnError, Conflict, DamagedNote, InvalidInput, NotFound
from ..vault import atomic_write, load_config, scope_folder
from .files import Place, create_exclusive, read_bytes

FOLDER = "proposals"
KINDS = ("add", "replace", "remove", "dream")
PENDING, APPROVED, REJECTED, CONFLICTED, EXPIRED = "pending", "approved", "rejected", "conflicted", "expired"
STATUSES = (PENDING, APPROVED, REJECTED, CONFLICTED, EXPIRED)
MODES = ("direct", "propose")
DEFAULT_TTL_MINUTES = 15
MAX_WHY_CHARS = 1000
_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
_TTL = re.compile(r"\s*(\d+)\s*(m|min|h|d)?\s*", re.IGNORECASE)
_MINUTES = {"m": 1, "min": 1, "h": 60, "d": 1440}


class Unchanged(InvalidInput):
    """The change asked for would leave the target as it is: nothing to propose."""


class ProposalConflict(Conflict):
    """The target is not as the proposal saw it; raised by a kind's commit, nothing written."""


@dataclass(frozen=True)
class Proposal:
    id: str
    scope: str
    kind: str
    target: str  # vault-relative path (a dream: the scope's folder)
    version: str | None  # the target's version when proposed; None: it must not exist
    status: str
    by: str  # who proposed it (the proposing process's origin)
    via: str  # the face it came through: mcp, cli, dream, import, api
    created: str
    expires: str
    diff: str
    summary: str = ""
    text: str | None = None  # the full new text (None: a removal, or a dream)
    extra: dict[str, Any] = field(default_factory=dict)  # kind-specific: reason, decisions ...
    decided: str | None = None
    decided_by: str | None = None
    why: str | None = None
    outcome: dict[str, Any] | None = None  # what approval did: reason, results

    @property
    def path(self) -> str:
        return f"{scope_folder(self.scope)}/{FOLDER}/{self.id}.md"

    def status_at(self, now: datetime) -> str:
        """``expired`` for a pending proposal past its expiry, else the recorded status."""
        if self.status == PENDING and now >= datetime.fromisoformat(self.expires):
            return EXPIRED
        return self.status

    def to_dict(self, now: datetime | None = None, *, full: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "target": self.target,
            "status": self.status_at(now) if now is not None else self.status,
            "scope": self.scope,
            "version": self.version,
            "summary": self.summary,
            "by": self.by,
            "via": self.via,
            "created": self.created,
            "expires": self.expires,
            "decided": self.decided,
            "decided_by": self.decided_by,
            "why": self.why,
            "path": self.path,
            "diff": self.diff,
        }
        if self.outcome:
            data["outcome"] = self.outcome
        if full:
            data["text"] = self.text
            data["extra"] = self.extra
        return data


# -- settings -------------------------------------------------------------------------------------


def write_mode(place_or_vault: Any) -> str:
    """``direct`` (the default) or ``propose``, from cairn.toml's ``write_mode``."""
    vault = getattr(place_or_vault, "vault", place_or_vault)
    value = load_config(vault).extra.get("write_mode", "direct")
    if value not in MODES:
        raise InvalidInput(f'{vault / "cairn.toml"}: write_mode must be "direct" or "propose", not {value!r}')
    return str(value)


def ttl(place: Place) -> timedelta:
    """``proposal_ttl`` from cairn.toml: minutes (15), or "15m", "2h", "1d"; default 15 minutes."""
    value = load_config(place.vault).extra.get("proposal_ttl", DEFAULT_TTL_MINUTES)
    minutes = None
    if isinstance(value, int) and not isinstance(value, bool):
        minutes = value
    elif isinstance(value, str) and (m := _TTL.fullmatch(value)):
        minutes = int(m[1]) * _MINUTES[(m[2] or "m").lower()]
    if minutes is None or minutes < 1:
        raise InvalidInput(
            f"{place.vault / 'cairn.toml'}: proposal_ttl must be a number of minutes (at least 1), "
            f'or text such as "15m", "2h" or "1d"; not {value!r}'
        )
    return timedelta(minutes=minutes)


# -- the files ------------------------------------------------------------------------------------

_FRONT_KEYS = (
    "id", "kind", "target", "version", "status", "by", "via", "created", "expires", "summary",
    "decided", "decided_by", "why", "outcome", "extra", "diff", "text",
)  # fmt: skip


def render(proposal: Proposal) -> str:
    """The proposal file: front matter that a decision reads back, then the diff for a person."""
    import yaml

    from ..markdown import _Dumper  # the notes' dumper: multi-line text as literal blocks

    front = {key: getattr(proposal, key) for key in _FRONT_KEYS}
    front["type"] = "proposal"
    dumped = yaml.dump(front, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=10**6)
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", proposal.diff)), default=0))
    lines = [
        f"# Proposal {proposal.id}: {proposal.kind} {proposal.target}",
        "",
        f"{proposal.status}. Proposed by {proposal.by} ({proposal.via}) at {proposal.created}; "
        f"expires {proposal.expires}.",
        "",
        f"Decide with `cairn proposals approve {proposal.id}` or "
        f"`cairn proposals reject {proposal.id} --why TEXT`.",
        "",
        f"{fence}diff",
        proposal.diff.rstrip("\n"),
        fence,
        "",
    ]
    return f"---\n{dumped}---\n\n" + "\n".join(lines)


def parse(rel: str, scope: str, data: bytes) -> Proposal:
    """A proposal file read back. Raises DamagedNote when it is not one."""
    from .. import markdown

    try:
        front = markdown.parse(data.decode("utf-8")).frontmatter
    except UnicodeDecodeError as exc:
        raise DamagedNote(f"{rel}: not UTF-8") from exc
    except DamagedNote as exc:
        raise DamagedNote(f"{rel}: {exc.message}") from exc
    try:
        proposal = Proposal(
            id=_str(front, "id"),
            scope=scope,
            kind=_str(front, "kind"),
            target=_str(front, "target"),
            version=_opt(front, "version"),
            status=_str(front, "status"),
            by=_str(front, "by"),
            via=_str(front, "via"),
            created=_str(front, "created"),
            expires=_str(front, "expires"),
            diff=_opt(front, "diff") or "",
            summary=_opt(front, "summary") or "",
            text=_opt(front, "text"),
            extra=_map(front, "extra") or {},
            decided=_opt(front, "decided"),
            decided_by=_opt(front, "decided_by"),
            why=_opt(front, "why"),
            outcome=_map(front, "outcome"),
        )
        datetime.fromisoformat(proposal.expires)
    except (KeyError, TypeError, ValueError) as exc:
        raise DamagedNote(f"{rel}: not a proposal Cairn can read ({exc})") from exc
    if proposal.kind not in KINDS or proposal.status not in STATUSES or f"/{proposal.id}.md" not in rel:
        raise DamagedNote(f"{rel}: not a proposal Cairn can read (kind, status or id)")
    return proposal


def _str(front: dict[str, Any], key: str) -> str:
    value = front[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is not text")
    return value


def _opt(front: dict[str, Any], key: str) -> str | None:
    value = front.get(key)
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{key} is not text")
    return value


def _map(front: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = front.get(key)
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{key} is not a mapping")
    return value


def check_id(proposal_id: str) -> str:
    if not isinstance(proposal_id, str) or not _ID.fullmatch(proposal_id.strip()):
        raise InvalidInput(f"{proposal_id!r} is not a proposal id (e.g. 20260512-143001-a1b2c3)")
    return proposal_id.strip()


def new_id(now: datetime) -> str:
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def create(place: Place, now: datetime | None = None, **fields: Any) -> Proposal:
    """Write a new pending proposal (a pure create: a clash of ids tries another)."""
    now = now or datetime.now(place.tz)
    now = now.replace(microsecond=0)
    for _ in range(5):
        proposal = Proposal(
            id=new_id(now),
            scope=place.scope,
            status=PENDING,
            by=place.origin,
            created=now.isoformat(),
            expires=(now + ttl(place)).isoformat(),
            **fields,
        )
        try:
            create_exclusive(place.path(proposal.path), render(proposal).encode("utf-8"))
        except FileExistsError:
            continue
        return proposal
    raise Conflict("could not find a free proposal id; try again")


def load(place: Place, proposal_id: str) -> Proposal:
    rel = f"{place.folder}/{FOLDER}/{check_id(proposal_id)}.md"
    data = read_bytes(place.vault, rel)
    if data is None:
        raise NotFound(f"no proposal {proposal_id} in scope {place.scope}")
    return parse(rel, place.scope, data)


def listing(place: Place) -> tuple[list[Proposal], list[str]]:
    """The scope's proposals, newest first, and the files that could not be read."""
    folder = place.path(f"{place.folder}/{FOLDER}")
    found: list[Proposal] = []
    damaged: list[str] = []
    try:
        names = sorted((p.name for p in folder.iterdir() if p.name.endswith(".md")), reverse=True)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    for name in names:
        if not _ID.fullmatch(name[:-3]):
            continue
        rel = f"{place.folder}/{FOLDER}/{name}"
        try:
            data = read_bytes(place.vault, rel)
            if data is not None:
                found.append(parse(rel, place.scope, data))
        except CairnError as exc:
            damaged.append(exc.message)
    return found, damaged


# -- decisions ------------------------------------------------------------------------------------

Committer = Callable[[Place, Proposal], dict[str, Any]]


def decide(
    place: Place,
    proposal_id: str,
    approve: bool,
    commit: Committer,
    *,
    why: str | None = None,
    by: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Approve (``commit`` writes the change, raising ProposalConflict when the target moved)
    or reject a pending proposal, once; a decided one is answered as it stands, with
    ``"again": true``. The whole decision holds the vault's write lock, so two processes
    deciding at once make one decision."""
    from .. import guard

    if why is not None:
        why = " ".join(why.split())
        if len(why) > MAX_WHY_CHARS:
            raise InvalidInput(f"the reason holds at most {MAX_WHY_CHARS} characters")
        guard.check_text(why, where="reason")
    with place.writing():
        now = now or datetime.now(place.tz)
        proposal = load(place, proposal_id)
        if proposal.status != PENDING:
            return proposal.to_dict(now) | {"again": True}
        outcome: dict[str, Any] | None = None
        if proposal.status_at(now) == EXPIRED:
            status = EXPIRED
        elif not approve:
            status = REJECTED
        else:
            try:
                outcome = commit(place, proposal)
                status = APPROVED
            except ProposalConflict as exc:
                status, outcome = CONFLICTED, {"reason": exc.message}
        decided = replace(
            proposal,
            status=status,
            decided=now.replace(microsecond=0).isoformat(),
            decided_by=by or place.origin,
            why=why or None,
            outcome=outcome,
        )
        atomic_write(place.path(decided.path), render(decided).encode("utf-8"))
        _log(place, decided)
        return decided.to_dict(now) | {"again": False}


def _log(place: Place, proposal: Proposal) -> None:
    from .dream import append_log

    header = {
        "kind": "proposal",
        "proposal": proposal.id,
        "decision": proposal.status,
        "proposal_kind": proposal.kind,
        "target": proposal.target,
        "proposed_by": proposal.by,
        "decided_by": proposal.decided_by,
    }
    lines = [
        f"{proposal.status} proposal {proposal.id}: {proposal.kind} {proposal.target}"
        f" (proposed by {proposal.by} via {proposal.via} at {proposal.created})"
    ]
    if proposal.summary:
        lines.append(f"- summary: {proposal.summary}")
    if proposal.why:
        lines.append(f"- why: {proposal.why}")
    if proposal.outcome and proposal.outcome.get("reason"):
        lines.append(f"- reason: {proposal.outcome['reason']}")
    for result in (proposal.outcome or {}).get("results", ()):
        lines.append(
            f"- #{result.get('index')} {result.get('kind')}: {result.get('status')} {result.get('reason') or ''}"
        )
    append_log(place, header, "\n".join(line.rstrip() for line in lines))


def answer(proposal: Proposal) -> dict[str, Any]:
    """What an agent's write gets back: the id and that a person must decide."""
    return {
        "proposal": proposal.id,
        "status": PENDING,
        "kind": proposal.kind,
        "target": proposal.target,
        "expires": proposal.expires,
        "diff": proposal.diff,
        "message": (
            f"Not written yet: proposal {proposal.id} waits for a person to approve it "
            f"(cairn proposals approve {proposal.id}) before {proposal.expires}."
        ),
    }


def unified(before: str, after: str, rel: str) -> str:
    """A unified diff of a file's text (``/dev/null`` for a side that does not exist)."""
    import difflib

    old_name = f"a/{rel}" if before else "/dev/null"
    new_name = f"b/{rel}" if after else "/dev/null"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, new_name
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
