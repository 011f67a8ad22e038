"""``cairn serve``: the MCP server over stdio or streamable HTTP."""

from typing import Annotated

import typer

from ..errors import InvalidInput
from .common import Command, JsonOpt, _guard, _memory, _scopes, _want_json, app


@app.command(cls=Command)
def serve(
    ctx: typer.Context,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP with a bearer token instead of stdio.")
    ] = False,
    host: Annotated[
        str | None,
        typer.Option("--host", metavar="HOST", help="HTTP address to bind.  [default: 127.0.0.1, loopback]"),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            metavar="PORT",
            min=0,
            max=65535,
            help="HTTP port; 0 takes any free one.  [default: 8765]",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="NAME",
            help="With --http: a host name (or name:port) clients may use to reach the server, besides "
            "loopback; repeatable. Requests naming any other Host or Origin are refused.",
        ),
    ] = None,
    allow_scope: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-scope",
            metavar="SCOPE",
            help="Confine the server to this scope; repeatable. The first is the default scope unless "
            "the global --scope names another allowed one. Default: cairn.toml allow_scopes plus --scope.",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run the MCP server over stdio (default) or HTTP for agents to use this vault.

    With --http the bearer token is kept in <home>/mcp-token; the URL, the token and client
    configurations are printed on stderr when the server starts. With --allow-scope the agent
    can read and write only those scopes; any other scope is refused.
    """
    as_json = _want_json(ctx, json_out)
    with _guard(as_json):
        allowed = _scopes(allow_scope)
        address = {name: value for name, value in (("host", host), ("port", port)) if value is not None}
        given = [f"--{name}" for name in address] + (["--allow-host"] if allow_host else [])
        if given and not http:
            raise InvalidInput(f"{' and '.join(given)} apply to --http only; stdio has no address")
    with _memory(
        ctx, as_json, allow_scopes=allowed, watch=True, first_index_progress=False, create=True
    ) as mem:
        from ..governance import schedule

        ctx.call_on_close(schedule.start(mem).set)  # the daily dream of scopes whose dream.json sets daily_at
        mem.start_background_sync()  # a vault with a remote syncs every sync_interval
        if not http:
            from .. import mcp_server

            # stdout is the protocol channel: say nothing there.
            mcp_server.serve_stdio(mem)
            return
        from .. import mcp_http

        token = mcp_http.load_or_create_token(mem.home)
        extra = {"allow_hosts": list(allow_host)} if allow_host else {}
        mcp_http.serve_http(mem, token=token, **address, **extra)  # serve_http's defaults for the rest
