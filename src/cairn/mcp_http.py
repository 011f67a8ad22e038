"""Serving Cairn's MCP server over streamable HTTP: the bearer token, the Host and Origin checks,
the banner a person reads, and the listening socket.

Every request must carry ``Authorization: Bearer <token>`` (kept in ``<home>/mcp-token``, 0600),
and name a Host (and, from a browser, an Origin) that this server answers to: loopback always,
the address bound when it is a specific one, and each ``--allow-host`` name. Binding to all
interfaces (``0.0.0.0``) keeps these checks, so a web page cannot reach the server through DNS
rebinding; name the hosts other machines use with ``allow_hosts``.
"""

import errno
import hmac
import json
import os
import secrets
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import InvalidInput
from .mcp_server import build_server
from .memory import Memory

__all__ = [
    "BearerAuth",
    "http_app",
    "http_banner",
    "load_or_create_token",
    "serve_http",
    "transport_security",
]

TOKEN_FILE = "mcp-token"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("", "0.0.0.0", "::")


def load_or_create_token(home: Path) -> str:
    """The bearer token for the HTTP transport, kept in ``<home>/mcp-token`` (mode 0600).

    Generated with ``secrets.token_urlsafe(32)`` on first use and reused afterwards, unless the
    file is found readable by other users.
    """
    home = Path(home)
    path = home / TOKEN_FILE
    stored = _read_token(path)
    if stored and not _exposed(path):
        return stored
    home.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = home / f".{TOKEN_FILE}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if stored:  # an exposed token: replaced
            os.replace(tmp, path)
            return token
        try:
            os.link(tmp, path)  # fails if another process created the token first: use theirs
        except FileExistsError:
            if theirs := _read_token(path):
                return theirs
            os.replace(tmp, path)  # an empty file (a failed write, a touch): this token replaces it
        except OSError:  # no hard links on this file system
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return token


def _read_token(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _exposed(path: Path) -> bool:
    """True if other users could read the token file (it is made private now, and replaced).

    Where modes cannot be set (a file system without them) the token is kept: a new one would
    be just as readable.
    """
    if os.name != "posix" or not path.stat().st_mode & 0o077:
        return False
    path.chmod(0o600)
    if path.stat().st_mode & 0o077:
        return False
    print(f"{path} was readable by other users: a new token replaces it.", file=sys.stderr)
    return True


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            response = JSONResponse(
                {"error": "unauthorized", "message": "Send the header 'Authorization: Bearer <token>'."},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="cairn"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self._token)
        return False


def transport_security(host: str, allow_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host and Origin values this server answers to: loopback, the bound address when it is
    a specific one, and each of ``allow_hosts`` (``name`` or ``name:port``). Never switched off."""
    names = [*LOOPBACK, *([] if host in WILDCARD else [host]), *allow_hosts]
    hosts: list[str] = []
    origins: list[str] = []
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        _, sep, port = name.rpartition(":") if name.count(":") == 1 else (name, "", "")
        if sep and port.isdigit():  # name:port: only that port
            hosts.append(name)
            origins += [f"http://{name}", f"https://{name}"]
            continue
        shown = f"[{name}]" if ":" in name else name  # an IPv6 address in brackets
        hosts += [shown, f"{shown}:*"]
        origins += [f"http://{shown}", f"http://{shown}:*", f"https://{shown}", f"https://{shown}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def http_app(
    memory: Memory, token: str, *, host: str = "127.0.0.1", allow_hosts: Sequence[str] = ()
) -> ASGIApp:
    """The streamable HTTP app (endpoint ``/mcp``) behind the bearer-token, Host and Origin checks,
    and the web panel at every other path (its own login; the same Host and Origin checks)."""
    if not token:
        raise InvalidInput("an HTTP server needs a non-empty token")
    for name in allow_hosts:
        if not name.strip() or any(c in name for c in "/ \t@"):
            raise InvalidInput(
                f"--allow-host {name!r} is not a host name (e.g. myserver.local or 192.168.1.5)"
            )
    security = transport_security(host, allow_hosts)
    app = build_server(memory).streamable_http_app(host=host, transport_security=security)
    from . import web  # the panel at /, beside /mcp: one port, one token, one Host/Origin rule

    return web.with_panel(BearerAuth(app, token), web.panel_app(memory, token, security=security))


def _url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    return f"http://{_address(shown, port)}/mcp"


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # an IPv6 host in brackets


def _cairn_command() -> str:
    """Absolute path of the ``cairn`` script beside this interpreter (clients do not share our PATH)."""
    beside = Path(sys.executable).parent / "cairn"
    return str(beside) if beside.exists() else "cairn"


def http_banner(host: str, port: int, token: str, allow_hosts: Sequence[str] = ()) -> str:
    """What to print when the HTTP server starts: endpoint, token, client configs to paste, and
    how to stop it or choose another port."""
    url = _url(host, port)
    url_config = (
        '{\n  "mcpServers": {\n    "cairn": {\n'
        f'      "url": {json.dumps(url)},\n'
        f'      "headers": {{"Authorization": {json.dumps("Bearer " + token)}}}\n'
        "    }\n  }\n}"
    )
    stdio_config = json.dumps({"mcpServers": {"cairn": {"command": _cairn_command(), "args": ["serve"]}}})
    lines = [
        "Cairn MCP server (streamable HTTP)",
        f"  URL:   {url}",
        f"  Token: {token}",
        "",
        "Cursor and other clients that take a URL (mcp.json):",
        url_config,
        "",
        "Claude Code:",
        f'  claude mcp add --transport http cairn {url} --header "Authorization: Bearer {token}"',
        "",
        "Claude Desktop and other local clients can use stdio instead (no token; `cairn serve`):",
        stdio_config,
    ]
    if host not in LOOPBACK:
        lines += [
            "",
            f"WARNING: listening on {host}: anyone who can reach this port and has the token can read and write memory.",
        ]
        reach = ", ".join(allow_hosts) if allow_hosts else None
        if host in WILDCARD:
            lines.append(
                f"Other machines may reach it as: {reach}."
                if reach
                else "Only loopback names are accepted in the Host header: add --allow-host NAME for "
                "each name other machines use (e.g. --allow-host myserver.local)."
            )
    lines += [
        "",
        'Stop the server with Ctrl-C. Another port: --port 9000 (with make: make run RUN_ARGS="--port 9000").',
    ]
    return "\n".join(lines)


def serve_http(
    memory: Memory,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve ``memory`` over streamable HTTP at ``http://<host>:<port>/mcp`` until interrupted.

    Args:
        memory: an open ``Memory``.
        host: interface to bind; loopback unless another host is given explicitly.
        port: TCP port; 0 takes any free one (the banner names it).
        token: bearer token; default ``load_or_create_token(memory.home)``.
        allow_hosts: names (``name`` or ``name:port``) other machines use to reach the server;
            requests naming any other Host or Origin are refused, whatever ``host`` is.

    Raises:
        InvalidInput: the address cannot be listened on (the port is taken, the host is not
            this machine's); nothing has been printed then.
    """
    import uvicorn

    if token is None:
        token = load_or_create_token(memory.home)
    app = http_app(memory, token, host=host, allow_hosts=allow_hosts)
    listener = _listen(host, port)
    port = listener.getsockname()[1]
    print(http_banner(host, port, token, allow_hosts), file=sys.stderr, flush=True)
    from .web import login_link

    print(
        f"\nWeb panel (log in by opening this link once):\n  {login_link(host, port, token)}", file=sys.stderr
    )
    print(f"\nVault: {memory.vault}\nIndex: {memory.index_path}\n", file=sys.stderr, flush=True)
    # Handed the socket already bound: the banner shows only an address that is really ours.
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


def _listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (0: any free port), for ``serve_http``."""
    where = _address(host, port)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise InvalidInput(f"cannot listen on {where}: unknown host ({exc.strerror})") from exc
    listener = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":  # reuse a port a stopped server left in TIME_WAIT, as uvicorn does
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
    except OSError as exc:
        listener.close()
        hint = "; choose another with --port (0 takes any free one)" if exc.errno == errno.EADDRINUSE else ""
        raise InvalidInput(f"cannot listen on {where}: {exc.strerror}{hint}") from exc
    return listener
