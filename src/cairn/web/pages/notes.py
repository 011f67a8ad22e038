"""Notes: the list by scope, folder, type and tag; one note read, edited (version checked),
trashed; the trash with restore."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...errors import Conflict, NotFound
from ..app import NavItem, Panel, form_of
from ..render import first_body_line

NAV = [NavItem("/", "nav.notes", order=10), NavItem("/trash", "nav.trash", order=90)]
LIST_LIMIT = 200


def note_url(permalink: str, scope: str, **query: str) -> str:
    return f"/note/{quote(permalink, safe='')}?{urlencode({'scope': scope, **query})}"


def _scope(panel: Panel, value: str | None) -> str:
    return value if value in panel.memory.allow_scopes else panel.memory.scope


def routes(panel: Panel) -> list[tuple[str, Any, list[str]]]:
    memory = panel.memory

    async def listing(request: Request) -> Response:
        q = request.query_params
        scope = _scope(panel, q.get("scope"))
        chosen = {k: q.get(k, "").strip() for k in ("folder", "type", "tag")}
        notes = await panel.call(
            memory.list,
            folder=chosen["folder"] or None,
            type=chosen["type"] or None,
            tag=chosen["tag"] or None,
            limit=LIST_LIMIT,
            scope=scope,
        )
        return panel.page(
            request,
            "notes.html",
            notes=notes,
            scope=scope,
            scopes=memory.allow_scopes,
            chosen=chosen,
            limit=LIST_LIMIT,
            note_url=note_url,
        )

    async def show(request: Request) -> Response:
        permalink = request.path_params["permalink"]
        scope = _scope(panel, request.query_params.get("scope"))
        ctx = await panel.call(memory.context, f"memory://{permalink}", depth=1, scope=scope)
        note = ctx.primary[0]
        targets = {r.target.casefold() for r in note.relations}
        outgoing = [
            n for n in ctx.related if n.note.title.casefold() in targets or n.note.permalink in targets
        ]
        backlinks = [n for n in ctx.related if n not in outgoing]
        return panel.page(
            request,
            "note.html",
            note=note,
            scope=scope,
            backlinks=backlinks,
            note_url=note_url,
            first_line=first_body_line(note.text, note.body),
            done=request.query_params.get("done"),
        )

    async def edit(request: Request) -> Response:
        permalink = request.path_params["permalink"]
        scope = _scope(panel, request.query_params.get("scope"))
        note = await panel.call(memory.read, permalink, scope=scope)
        return panel.page(request, "edit.html", note=note, scope=scope, text=note.text, version=note.version)

    async def save(request: Request) -> Response:
        permalink = request.path_params["permalink"]
        form = await form_of(request)
        scope = _scope(panel, form.get("scope"))
        text = form.get("text", "")
        try:
            note = await panel.call(
                memory.replace_text, permalink, text, form.get("version", ""), scope=scope
            )
        except Conflict:
            now = await panel.call(memory.read, permalink, scope=scope)
            return panel.page(
                request,
                "edit.html",
                status=409,
                note=now,
                scope=scope,
                text=text,
                version=now.version,
                conflict=True,
            )
        return RedirectResponse(note_url(note.permalink, scope, done="note.saved"), status_code=303)

    async def delete(request: Request) -> Response:
        form = await form_of(request)
        scope = _scope(panel, form.get("scope"))
        await panel.call(
            memory.delete, request.path_params["permalink"], reason=form.get("reason") or None, scope=scope
        )
        return RedirectResponse(
            f"/trash?{urlencode({'scope': scope, 'done': 'note.deleted'})}", status_code=303
        )

    async def go(request: Request) -> Response:
        """A ``[[Title]]`` link: the note by that title, permalink or path, else a search for it."""
        title = request.path_params["title"]
        scope = _scope(panel, request.query_params.get("scope"))
        try:
            note = await panel.call(memory.read, title, scope=scope)
        except NotFound:
            return RedirectResponse(f"/search?{urlencode({'q': title})}", status_code=303)
        return RedirectResponse(note_url(note.permalink, scope), status_code=303)

    async def trash(request: Request) -> Response:
        scope = _scope(panel, request.query_params.get("scope"))
        notes = await panel.call(memory.trash, scope=scope)
        return panel.page(
            request,
            "trash.html",
            notes=notes,
            scope=scope,
            scopes=memory.allow_scopes,
            done=request.query_params.get("done"),
        )

    async def restore(request: Request) -> Response:
        form = await form_of(request)
        scope = _scope(panel, form.get("scope"))
        note = await panel.call(memory.restore, form.get("permalink", ""), scope=scope)
        return RedirectResponse(note_url(note.permalink, scope, done="trash.restored"), status_code=303)

    return [
        ("/", listing, ["GET"]),
        ("/note/{permalink:path}", show, ["GET"]),
        ("/edit/{permalink:path}", edit, ["GET"]),
        ("/save/{permalink:path}", save, ["POST"]),
        ("/delete/{permalink:path}", delete, ["POST"]),
        ("/go/{title:path}", go, ["GET"]),
        ("/trash", trash, ["GET"]),
        ("/restore", restore, ["POST"]),
    ]
