"""The inbox: note an observation by hand; open observations archived or dropped by hand."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..app import NavItem, Panel, form_of

NAV = [NavItem("/inbox", "nav.inbox", lambda memory: hasattr(memory, "observe"), order=30)]
SOURCE = "panel"


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    def scope_of(value: str | None) -> str:
        return value if value in memory.allow_scopes else memory.scope

    async def inbox(request: Request) -> Response:
        scope = scope_of(request.query_params.get("scope"))
        loaded = await panel.call(memory.dream_load, scope)
        observations = sorted(loaded["observations"], key=lambda o: o.get("created") or "", reverse=True)
        return panel.page(
            request,
            "inbox.html",
            observations=observations,
            scope=scope,
            scopes=memory.allow_scopes,
            can_settle=hasattr(memory, "settle_observation"),
        )

    async def observe(request: Request) -> Response:
        form = await form_of(request)
        scope = scope_of(form.get("scope"))
        tags = [t.lstrip("#") for t in form.get("tags", "").replace(",", " ").split() if t.strip("#")]
        answer = await panel.call(
            memory.observe,
            form.get("text", ""),
            tags=tags,
            durable=True if form.get("durable") else None,  # unchecked is neutral, not "short-term"
            source=SOURCE,
            scope=scope,
        )
        done = "observe.duplicate" if answer.get("duplicate") else "observe.done"
        return RedirectResponse(f"/inbox?{urlencode({'scope': scope, 'done': done})}", status_code=303)

    async def settle(request: Request) -> Response:
        form = await form_of(request)
        scope = scope_of(form.get("scope"))
        outcome = "dropped" if form.get("action") == "drop" else "archived"
        await panel.call(memory.settle_observation, form.get("id", ""), outcome, scope=scope)
        return RedirectResponse(
            f"/inbox?{urlencode({'scope': scope, 'done': 'inbox.done'})}", status_code=303
        )

    return [("/inbox", inbox, ["GET"]), ("/observe", observe, ["POST"]), ("/inbox/settle", settle, ["POST"])]
