"""Proposals (issue 35, approval mode): each with its diff coloured, approved or rejected with a
reason, by ``panel``; expired and conflicted ones marked. ``Memory.proposals``, ``approve`` and
``reject`` do the work (governance.proposals): approval writes only if the target is unchanged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...governance.proposals import STATUSES
from ..app import NavItem, Panel, form_of

NAV = [NavItem("/proposals", "nav.proposals", order=40)]
BY = "panel"  # who decided, in the proposal file and log.md
_DONE = {"approved": "proposals.approved", "rejected": "proposals.rejected"}


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with its class: ``add``, ``del``, ``hunk``, ``file`` or ``same``."""
    out = []
    for line in (diff or "").rstrip("\n").split("\n"):
        kind = "same"
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        elif line.startswith("@@"):
            kind = "hunk"
        out.append((kind, line))
    return out


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def listing(request: Request) -> Response:
        status = request.query_params.get("status") or None
        if status not in (None, *STATUSES):
            status = None
        items = await panel.call(memory.proposals, status=status)
        items.sort(key=lambda p: p["status"] != "pending")  # waiting ones first, newest first within
        return panel.page(
            request,
            "proposals.html",
            proposals=items,
            diff_lines=diff_lines,
            statuses=STATUSES,
            shown=status,
            write_mode=await panel.call(lambda: memory.write_mode),
        )

    async def decide(request: Request) -> Response:
        form = await form_of(request)
        pid = form.get("id", "")
        if form.get("action") == "approve":
            answer = await panel.call(memory.approve, pid, by=BY)
        else:
            answer = await panel.call(memory.reject, pid, form.get("why") or None, by=BY)
        done = _DONE.get(answer["status"], f"proposals.now_{answer['status']}")
        return RedirectResponse(f"/proposals?{urlencode({'done': done})}#p-{answer['id']}", status_code=303)

    return [("/proposals", listing, ["GET"]), ("/proposals/decide", decide, ["POST"])]
