"""Search: the same call and results as ``cairn search``, query words marked, filters as chips,
sensitive notes only when asked, each hit linking to its line."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from ..app import NavItem, Panel
from .notes import note_url

NAV = [NavItem("/search", "nav.search", order=20)]
FILTERS = ("tag", "type", "folder", "since", "scope")
DEFAULT_LIMIT = 10  # as cairn search
MAX_LIMIT = 100


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def search(request: Request) -> Response:
        q = request.query_params
        query = q.get("q", "").strip()
        chosen = {k: q.get(k, "").strip() for k in FILTERS if q.get(k, "").strip()}
        sensitive = q.get("sensitive") == "1"
        try:
            limit = max(1, min(MAX_LIMIT, int(q.get("limit", DEFAULT_LIMIT))))
        except ValueError:
            limit = DEFAULT_LIMIT
        hits = None
        if query or chosen:
            hits = await panel.call(
                memory.search,
                query,
                tags=[chosen["tag"]] if "tag" in chosen else [],
                type=chosen.get("type"),
                folder=chosen.get("folder"),
                since=chosen.get("since"),
                include_sensitive=sensitive,
                limit=limit,
                scope=chosen.get("scope"),
            )

        def without(name: str) -> str:
            rest = {k: v for k, v in chosen.items() if k != name}
            return "/search?" + urlencode({"q": query, **rest, **({"sensitive": "1"} if sensitive else {})})

        def hit_url(hit: Any) -> str:
            return note_url(hit.permalink, hit.scope) + f"#L{hit.line}"

        return panel.page(
            request,
            "search.html",
            query=query,
            chosen=chosen,
            sensitive=sensitive,
            hits=hits,
            without=without,
            hit_url=hit_url,
            note_url=note_url,
            scopes=memory.allow_scopes,
        )

    return [("/search", search, ["GET"])]
