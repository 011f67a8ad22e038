"""The dream: its switch, model, endpoint and daily time, the last run, the tail of log.md,
and "run now" with its outcome."""

from __future__ import annotations

import contextlib
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...errors import CairnError
from ...vault import scope_folder
from ..app import NavItem, Panel, form_of

NAV = [NavItem("/dream", "nav.dream", lambda memory: hasattr(memory, "dream_status"), order=50)]
LOG_TAIL_BYTES = 8 * 1024


def log_tail(panel: Panel, scope: str) -> str:
    """The end of ``<scope>/log.md`` (whole entries: from the first entry header in the tail)."""
    path = panel.memory.vault / scope_folder(scope) / "log.md"
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - LOG_TAIL_BYTES))
        text = handle.read().decode("utf-8", errors="replace")
        if size > LOG_TAIL_BYTES:
            text = text[text.find("\n{") + 1 :] if "\n{" in text else text
        # the JSON headers are for programs; a person reads the Markdown entries under them
        lines = [line for line in text.split("\n") if not line.startswith("{")]
        first = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
        return "\n".join(lines[first:])
    return ""


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    def scope_of(value: str | None) -> str:
        return value if value in memory.allow_scopes else memory.scope

    async def page(request: Request, outcome: Any = None, status: int = 200) -> Response:
        scope = scope_of(request.query_params.get("scope"))
        info = await panel.call(memory.dream_status, scope)
        tail = await panel.call(log_tail, panel, scope)
        return panel.page(
            request,
            "dream.html",
            status=status,
            info=info,
            tail=tail,
            scope=scope,
            scopes=memory.allow_scopes,
            outcome=outcome,
        )

    async def show(request: Request) -> Response:
        return await page(request)

    async def switch(request: Request) -> Response:
        form = await form_of(request)
        scope = scope_of(form.get("scope"))
        action = form.get("action")
        enabled = True if action == "on" else False if action == "off" else None
        if action == "settings":
            await panel.call(
                memory.dream_switch,
                None,
                model=form.get("model", ""),
                base_url=form.get("base_url", ""),
                daily_at=form.get("daily_at", ""),
                scope=scope,
            )
        else:
            await panel.call(memory.dream_switch, enabled, scope=scope)
        return RedirectResponse(f"/dream?scope={scope}", status_code=303)

    async def run(request: Request) -> Response:
        form = await form_of(request)
        scope = scope_of(form.get("scope"))
        try:
            outcome = await panel.call(memory.dream_run, scope, trigger="panel")
        except CairnError as exc:  # no model, the dream off, the model failing: shown as the outcome
            return await page(request, outcome={"status": "error", "note": exc.message}, status=400)
        return await page(request, outcome=outcome)

    return [("/dream", show, ["GET"]), ("/dream/switch", switch, ["POST"]), ("/dream/run", run, ["POST"])]
