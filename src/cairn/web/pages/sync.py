"""Sync (issue 34): the remote (masked), the last sync, the outbox, "sync now" with its report or
its one-line error, and the ``.conflict/`` copies beside their live note: keep mine, keep theirs,
or merge by hand. ``Memory.sync``, ``sync_status``, ``conflicts`` and ``resolve_conflict`` do the
work (cairn.sync.conflicts); a note changed since the page was shown is never overwritten.
"""

from __future__ import annotations

import difflib
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...errors import CairnError, Conflict
from ...memory import Memory
from ...sync import status_of
from ..app import NavItem, Panel, form_of
from .proposals import diff_lines

NAV = [NavItem("/sync", "nav.sync", order=60)]


def _status(memory: Memory) -> dict[str, Any]:
    """The remote's status; without a remote attached, what the state directory says."""
    return memory.sync_status() or status_of(memory.vault, memory.home)


def _conflicts(memory: Memory) -> list[dict[str, Any]]:
    """``Memory.conflicts`` with a coloured diff from the live note to the copy."""
    items = memory.conflicts()
    for item in items:
        mine = (item["note"] or {}).get("text", "")
        diff = difflib.unified_diff(
            mine.splitlines(), item["text"].splitlines(), "mine", "theirs", lineterm="", n=2
        )
        item["diff"] = diff_lines("\n".join(list(diff)[2:]))
    return items


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def page(request: Request, status: int = 200, **extra: Any) -> Response:
        return panel.page(
            request,
            "sync.html",
            status=status,
            remote=await panel.call(_status, memory),
            conflicts=await panel.call(_conflicts, memory),
            **extra,
        )

    async def show(request: Request) -> Response:
        return await page(request)

    async def sync_now(request: Request) -> Response:
        try:
            report = (await panel.call(memory.sync)).to_dict()
        except CairnError as exc:  # no remote, unreachable, a refused credential: one line
            return await page(request, failed=exc.message)
        return await page(request, report=report)

    async def resolve(request: Request) -> Response:
        form = await form_of(request)
        keep = form.get("keep", "")
        try:
            await panel.call(
                memory.resolve_conflict,
                form.get("path", ""),
                keep=keep,
                text=form.get("text") if keep == "merged" else None,
                if_version=form.get("version") or None,
            )
        except Conflict:
            return await page(request, status=409, changed=form.get("path", ""))
        return RedirectResponse("/sync?done=sync.resolved", status_code=303)

    return [("/sync", show, ["GET"]), ("/sync/now", sync_now, ["POST"]), ("/sync/resolve", resolve, ["POST"])]
