"""Proposals (issue 35, approval mode): each with its diff, approved or rejected with a reason.

Built against the names the proposals work defines (``Memory.proposals``, ``approve``,
``reject``); the page stays out of the navigation until ``Memory.proposals`` exists.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..app import NavItem, Panel, form_of

NAV = [NavItem("/proposals", "nav.proposals", lambda memory: hasattr(memory, "proposals"), order=40)]


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with its class: ``add``, ``del``, ``hunk`` or ``same``."""
    out = []
    for line in (diff or "").split("\n"):
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


def _as_dict(item: Any) -> dict[str, Any]:
    return item if isinstance(item, dict) else item.to_dict()


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def listing(request: Request) -> Response:
        if not hasattr(memory, "proposals"):
            return panel.error(request, "proposals are not part of this Cairn yet", status=404)
        items = [_as_dict(p) for p in await panel.call(memory.proposals)]
        return panel.page(request, "proposals.html", proposals=items, diff_lines=diff_lines)

    async def decide(request: Request) -> Response:
        form = await form_of(request)
        pid = form.get("id", "")
        if form.get("action") == "approve":
            await panel.call(memory.approve, pid)
        else:
            await panel.call(memory.reject, pid, why=form.get("why") or None)
        return RedirectResponse("/proposals?done=inbox.done", status_code=303)

    return [("/proposals", listing, ["GET"]), ("/proposals/decide", decide, ["POST"])]
