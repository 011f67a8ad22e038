"""The approval-mode calls of ``Memory`` (issue 35 item 5); logic in ``governance.proposals``,
``proposal_notes`` and ``proposal_dream``. A person decides; no agent-facing face reaches
``approve`` or ``reject``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..errors import InvalidInput, NotFound
from ..mending import mends_index as _mends_index
from ..vault import scope_folder


class ProposalMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    @property
    def write_mode(self) -> str:
        """``direct`` (the default) or ``propose``, from cairn.toml (read at each call)."""
        from . import proposals

        return proposals.write_mode(self.vault)

    @_mends_index
    def propose(
        self, action: str, *args: Any, scope: str | None = None, via: str = "api", **kwargs: Any
    ) -> dict[str, Any]:
        """Propose ``write``, ``append``, ``edit`` or ``delete`` (the arguments of that method)
        instead of doing it: ``{"proposal": ID, "status": "pending", "diff", "expires", ...}``.
        Every check of the direct write applies now; nothing is written until ``approve``."""
        from . import proposal_notes

        return proposal_notes.propose(self, self._governance_place(scope), action, *args, via=via, **kwargs)

    def propose_note(self, scope: str, path: str, text: str) -> dict[str, Any]:
        """Propose an imported note's whole text at ``path`` in ``scope`` (import in propose mode)."""
        return self.propose("note", path, text, scope=scope, via="import")

    def proposals(self, *, status: str | None = None, now: datetime | None = None) -> list[dict[str, Any]]:
        """The proposals of every allowed scope, newest first (``status`` keeps one status)."""
        from . import proposals

        if status is not None and status not in proposals.STATUSES:
            raise InvalidInput(f"status {status!r}: use one of {', '.join(proposals.STATUSES)}")
        found = []
        for scope in self.allow_scopes:
            place = self._governance_place(scope)
            found += proposals.listing(place)[0]
        moment = now or datetime.now(self.tz)
        items = [p.to_dict(moment) for p in sorted(found, key=lambda p: (p.created, p.id), reverse=True)]
        return [p for p in items if status is None or p["status"] == status]

    def proposal(self, proposal_id: str, *, now: datetime | None = None) -> dict[str, Any]:
        """One proposal with its full proposed text. Raises NotFound."""
        from . import proposals

        place = self._proposal_place(proposal_id)
        return proposals.load(place, proposal_id).to_dict(now or datetime.now(self.tz), full=True)

    @_mends_index
    def approve(self, proposal_id: str, *, by: str | None = None, now: datetime | None = None) -> dict[str, Any]:
        """Commit a pending proposal if its target is unchanged (else it becomes ``conflicted``);
        expired ones cannot be approved. Deciding again answers with the first decision."""
        from . import proposal_notes, proposals

        place = self._proposal_place(proposal_id)
        return proposals.decide(place, proposal_id, True, proposal_notes.commit_any, by=by, now=now)

    def reject(
        self, proposal_id: str, why: str | None = None, *, by: str | None = None, now: datetime | None = None
    ) -> dict[str, Any]:
        """Reject a pending proposal (nothing is written), with an optional reason for log.md."""
        from . import proposal_notes, proposals

        place = self._proposal_place(proposal_id)
        return proposals.decide(place, proposal_id, False, proposal_notes.commit_any, why=why, by=by, now=now)

    def _proposal_place(self, proposal_id: str) -> Any:
        from . import proposals

        name = proposals.check_id(proposal_id)
        for scope in self.allow_scopes:
            if (self.vault / scope_folder(scope) / proposals.FOLDER / f"{name}.md").is_file():
                return self._governance_place(scope)
        raise NotFound(f"no proposal {proposal_id} in the scopes allowed here ({', '.join(self.allow_scopes)})")
