"""Who may use the panel: the login link, the session cookie, the CSRF token, Host and Origin.

The panel shares the MCP server's bearer token. Opening ``/?token=...`` once starts a session: a
random id held here, in the server's memory (a restart logs everyone out), sent back as an
HttpOnly, SameSite=Strict cookie, and the browser is sent on to the same URL without the token.
A request without a live session gets the login page and nothing else. Every change is a POST
carrying the session's CSRF token in a form field. Host and Origin are checked on every request,
with the same allow-list as ``/mcp``, so a page elsewhere cannot reach the panel by DNS rebinding.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request

COOKIE = "cairn_session"
SESSION_SECONDS = 7 * 24 * 3600
MAX_SESSIONS = 1000  # a token holder opening the link in a loop must not grow memory without end


@dataclass
class Session:
    id: str
    csrf: str
    started: float


class Sessions:
    """Sessions held in memory; ids and CSRF tokens from ``secrets``."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def token_matches(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode("utf-8"), self._token)

    def start(self) -> Session:
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), time.time())
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:  # the oldest goes
                oldest = min(self._sessions.values(), key=lambda s: s.started)
                del self._sessions[oldest.id]
            self._sessions[session.id] = session
        return session

    def get(self, request: Request) -> Session | None:
        sid = request.cookies.get(COOKIE, "")
        with self._lock:
            session = self._sessions.get(sid) if sid else None
            if session is not None and time.time() - session.started > SESSION_SECONDS:
                del self._sessions[sid]
                return None
        return session

    def end(self, session: Session) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)


def csrf_ok(session: Session, offered: str | None) -> bool:
    return bool(offered) and hmac.compare_digest(str(offered).encode("utf-8"), session.csrf.encode("utf-8"))


def _matches(value: str, allowed: list[str]) -> bool:
    """The MCP SDK's rule: an exact entry, or ``name:*`` for that name with any port."""
    return value in allowed or any(
        a.endswith(":*") and value.startswith(a[:-2] + ":") and value[len(a) - 1 :].isdigit() for a in allowed
    )


def foreign(request: Request, security: TransportSecuritySettings) -> str | None:
    """Why the request's Host or Origin is refused, or None when both are ours."""
    if not security.enable_dns_rebinding_protection:
        return None
    host = request.headers.get("host", "")
    if not host or not _matches(host, security.allowed_hosts):
        return "host"
    origin = request.headers.get("origin")
    if origin is not None and not _matches(origin, security.allowed_origins):
        return "origin"
    return None


def without_token(request: Request) -> str:
    """The request's path and query with ``token`` taken out (where the login link sends on to)."""
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    return request.url.path + (f"?{urlencode(rest)}" if rest else "")


def login_link(host: str, port: int, token: str) -> str:
    """The URL the banner prints once: opening it logs the browser in."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    where = f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"
    return f"http://{where}/?{urlencode({'token': token})}"
