"""Sync (issue 34): the remote, the last sync, the outbox, and ``.conflict/`` copies beside their
note, to keep one version or save a merge by hand.

Built against the sync work's ``Memory.sync``, the ``remote``, ``last_sync`` and ``outbox`` of
``Memory.status()``, and ``Memory.conflicts`` / ``Memory.resolve_conflict``; the page stays out
of the navigation until those exist.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..app import NavItem, Panel, form_of

NEEDED = ("sync", "conflicts", "resolve_conflict")
NAV = [NavItem("/sync", "nav.sync", lambda memory: all(hasattr(memory, n) for n in NEEDED), order=60)]


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def show(request: Request) -> Response:
        if not all(hasattr(memory, n) for n in NEEDED):
            return panel.error(request, "sync is not part of this Cairn yet", status=404)
        status = await panel.call(memory.status)
        conflicts = await panel.call(memory.conflicts)
        return panel.page(request, "sync.html", status=status, conflicts=conflicts)

    async def sync_now(request: Request) -> Response:
        report = await panel.call(memory.sync)
        status = await panel.call(memory.status)
        conflicts = await panel.call(memory.conflicts)
        return panel.page(request, "sync.html", status=status, conflicts=conflicts, report=report)

    async def resolve(request: Request) -> Response:
        form = await form_of(request)
        keep = form.get("keep", "")
        text = form.get("text") if keep == "merged" else None
        await panel.call(memory.resolve_conflict, form.get("path", ""), keep=keep, text=text)
        return RedirectResponse("/sync?done=inbox.done", status_code=303)

    return [("/sync", show, ["GET"]), ("/sync/now", sync_now, ["POST"]), ("/sync/resolve", resolve, ["POST"])]
