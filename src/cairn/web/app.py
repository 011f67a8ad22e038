"""The panel's ASGI app: routes from one module per page group, sessions, CSRF, templates.

Each page parses the request, makes one ``Memory`` call (in a worker thread: Memory takes locks
and touches files) and renders a template. The panel holds no logic the CLI lacks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import CairnError, NotFound
from ..memory import Memory
from . import auth, i18n, render

Handler = Callable[[Request], Awaitable[Response]]
MAX_FORM_BYTES = 4 * 1024 * 1024  # a note is at most 2 MB; its text sent back twice at most
# Pages hold private notes: never cached, never framed, no script or style but our own files;
# the referrer stays on this site (with "no-referrer" Chromium sends "Origin: null" on our forms).
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' https: data:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


@dataclass
class NavItem:
    path: str
    key: str  # i18n key of its label
    live: Callable[[Memory], bool] = lambda memory: True
    order: int = 50  # place in the navigation bar


@dataclass
class Panel:
    memory: Memory
    sessions: auth.Sessions
    security: TransportSecuritySettings
    env: Environment
    nav: list[NavItem] = field(default_factory=list)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(fn, *args, **kwargs)

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        lang = i18n.choose(request.headers.get("accept-language"))
        session: auth.Session | None = request.scope.get("cairn.session")
        nav = [item for item in self.nav if item.live(self.memory)]
        done = request.query_params.get("done", "")
        html = self.env.get_template(template).render(
            t=i18n.translator(lang),
            lang=lang,
            csrf=session.csrf if session else "",
            nav=nav,
            here=request.url.path,
            health=request.scope.get("cairn.health"),
            request=request,
            flash=i18n.translator(lang)(done) if done in i18n.WORDS else None,
            **context,
        )
        return HTMLResponse(html, status_code=status, headers={"Content-Language": lang, **HEADERS})

    def error(self, request: Request, message: str, status: int = 400) -> HTMLResponse:
        return self.page(request, "error.html", status=status, message=message)


def environment() -> Environment:
    folder = resources.files("cairn.web") / "templates"
    env = Environment(
        loader=FileSystemLoader(str(folder)),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = render.markdown
    env.filters["mark"] = render.highlight
    env.globals["note_link"] = render.note_link
    return env


class Gate:
    """ASGI middleware in front of every page: Host and Origin, then the session, then CSRF on POST."""

    def __init__(self, app: ASGIApp, panel: Panel) -> None:
        self.app = app
        self.panel = panel

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = await self._check(request, scope)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _check(self, request: Request, scope: Scope) -> Response | None:
        panel = self.panel
        t = i18n.translator(i18n.choose(request.headers.get("accept-language")))
        refused = auth.foreign(request, panel.security)
        if refused:
            return panel.error(request, t("error.foreign"), status=421 if refused == "host" else 403)
        if request.url.path.startswith("/static/"):
            return None
        offered = request.query_params.get("token")
        if offered is not None and request.method == "GET":
            if not panel.sessions.token_matches(offered):
                return panel.page(request, "login.html", status=401, bad=True)
            session = panel.sessions.start()
            response = RedirectResponse(auth.without_token(request), status_code=303)
            response.set_cookie(
                auth.COOKIE,
                session.id,
                max_age=auth.SESSION_SECONDS,
                httponly=True,
                samesite="strict",
                path="/",
            )
            response.headers["Cache-Control"] = "no-store"
            return response
        session = panel.sessions.get(request)
        if session is None:
            return panel.page(request, "login.html", status=401, bad=False)
        scope["cairn.session"] = session
        if request.method not in ("GET", "HEAD"):
            if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
                return panel.error(request, "too large", status=413)
            form = await request.form(max_part_size=MAX_FORM_BYTES)
            scope["cairn.form"] = form
            if not auth.csrf_ok(session, form.get("csrf")):  # type: ignore[arg-type]
                return panel.error(request, t("error.csrf"), status=403)
        scope["cairn.health"] = await panel.call(_health, panel.memory)
        return None


def _health(memory: Memory) -> dict[str, Any]:
    """The line on every page: notes, damaged files, how the index follows the files."""
    try:
        return memory.status()
    except CairnError as exc:
        return {"error": exc.message}


async def form_of(request: Request) -> dict[str, str]:
    """The POSTed form (read once by the gate), as plain strings."""
    form = request.scope.get("cairn.form")
    if form is None:
        form = await request.form()
    return {k: v for k, v in form.multi_items() if isinstance(v, str)}


def guarded(panel: Panel, handler: Handler) -> Handler:
    """``handler`` with a CairnError shown as a page (404 for NotFound) instead of a traceback."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except NotFound as exc:
            return panel.error(request, exc.message, status=404)
        except CairnError as exc:
            return panel.error(request, exc.message, status=400)

    return run


def panel_app(memory: Memory, token: str, *, security: TransportSecuritySettings | None = None) -> ASGIApp:
    """The web panel for ``memory``, logged into with ``token``; Host and Origin as ``security``
    allows (default: loopback names only, as ``/mcp`` on loopback)."""
    from ..mcp_http import transport_security  # one rule for /mcp and the panel
    from .pages import PAGES

    panel = Panel(memory, auth.Sessions(token), security or transport_security("127.0.0.1"), environment())
    routes: list[BaseRoute] = []
    for module in PAGES:
        for path, handler, methods in module.routes(panel):
            routes.append(Route(path, guarded(panel, handler), methods=methods))
        panel.nav += getattr(module, "NAV", [])
    panel.nav.sort(key=lambda item: item.order)

    async def logout(request: Request) -> Response:
        session = request.scope.get("cairn.session")
        if session is not None:
            panel.sessions.end(session)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(auth.COOKIE, path="/", httponly=True, samesite="strict")
        return response

    routes.append(Route("/logout", logout, methods=["POST"]))
    static = StaticFiles(directory=str(resources.files("cairn.web") / "static"))
    routes.append(Mount("/static", app=static, name="static"))
    app = Starlette(routes=routes)
    return Gate(app, panel)


def with_panel(mcp_app: ASGIApp, panel: ASGIApp) -> ASGIApp:
    """One app: ``/mcp`` (and its lifespan) to the MCP server, every other path to the panel."""

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await mcp_app(scope, receive, send)
        else:
            await panel(scope, receive, send)

    return dispatch
