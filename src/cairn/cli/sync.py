"""``cairn remote set|show|unset`` and ``cairn sync``: thin commands over ``cairn.sync`` and
``Memory.sync``; importing the module registers the commands."""

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import CairnError, InvalidInput
from . import common as cli
from .common import app

# Runs shorter than this many files show no progress bar: it would only flicker.
PROGRESS_MIN_FILES = 50


remote_app = typer.Typer(
    name="remote",
    cls=cli.Group,
    help="Attach this vault to a remote (WebDAV, Seafile, S3, a folder), show it, or detach it.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(remote_app, name="remote")


def paths(ctx: typer.Context) -> tuple[Path, Path]:
    """(home, vault folder) as ``Memory.open`` resolves them; a URL vault is its mirror."""
    from ..sync import remotes

    settings = cli._settings(ctx)
    home = (
        Path(settings.home or os.environ.get("CAIRN_HOME") or Path.home() / ".cairn").expanduser().resolve()
    )
    given: Any = settings.vault or os.environ.get("CAIRN_VAULT")
    url = remotes.as_url(given)
    vault = remotes.mirror_folder(home, url) if url else Path(given or home / "vault")
    return home, vault.expanduser().resolve()


@remote_app.command("set", cls=cli.Command)
def remote_set(
    ctx: typer.Context,
    url: Annotated[
        str, typer.Argument(metavar="URL", help="webdav(s)://, seafile(+http)://, s3://, file://")
    ],
    user: Annotated[str | None, typer.Option("--user", metavar="USER", help="User name.")] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from the first line of stdin.")
    ] = False,
    token_stdin: Annotated[
        bool, typer.Option("--token-stdin", help="Read an API token from the first line of stdin.")
    ] = False,
    json_out: cli.JsonOpt = False,
) -> None:
    """Record the vault's remote in the state directory (0600), never in the vault.

    Credentials may also come from CAIRN_REMOTE_USER, CAIRN_REMOTE_PASSWORD, CAIRN_REMOTE_TOKEN
    (and the AWS_* variables for s3://), which override what is saved here.
    """
    from ..sync import remotes

    as_json = cli._want_json(ctx, json_out)
    with cli._guard(as_json):
        if password_stdin and token_stdin:
            raise InvalidInput("give --password-stdin or --token-stdin, not both")
        checked = remotes.check_url(url)
        secret = sys.stdin.readline().rstrip("\r\n") if (password_stdin or token_stdin) else None
        if (password_stdin or token_stdin) and not secret:
            raise InvalidInput(
                'stdin held no credential: pipe it in, e.g. printf %s "$PASS" | cairn remote set ...'
            )
        home, vault = paths(ctx)
        old = remotes.load(home, vault) if remotes.config_path(home, vault).exists() else None
        keep = old if old is not None and old.url == checked else None
        remote = remotes.Remote(
            url=checked,
            user=user if user is not None else keep and keep.user,
            password=secret if password_stdin else keep and keep.password,
            token=secret if token_stdin else keep and keep.token,
        )
        saved = remotes.save(home, vault, remote)
    if as_json:
        cli._emit_json({"vault": str(vault), "record": str(saved), **remote.masked()})
    else:
        cli._emit(f"remote of {vault}: {remotes.mask_url(checked)} (saved in {saved}); run cairn sync")


@remote_app.command("show", cls=cli.Command)
def remote_show(ctx: typer.Context, json_out: cli.JsonOpt = False) -> None:
    """Show the vault's remote (secrets masked), the last sync and the outbox."""
    from ..sync import remotes, status_of

    as_json = cli._want_json(ctx, json_out)
    with cli._guard(as_json):
        home, vault = paths(ctx)
        remote = remotes.load(home, vault)
        data: dict[str, Any] = {"vault": str(vault)}
        data.update(remote.masked() if remote else {"url": None})
        status = status_of(vault, home)
        data.update(last_sync=status["last_sync"], outbox=status["outbox"], conflicts=status["conflicts"])
    if as_json:
        cli._emit_json(data)
    elif remote is None:
        cli._emit(f"{vault} has no remote: attach one with cairn remote set URL")
    else:
        cli._print_mapping(data)


@remote_app.command("unset", cls=cli.Command)
def remote_unset(ctx: typer.Context, json_out: cli.JsonOpt = False) -> None:
    """Forget the vault's remote and its credentials (the vault's files stay as they are)."""
    from ..sync import remotes

    as_json = cli._want_json(ctx, json_out)
    with cli._guard(as_json):
        home, vault = paths(ctx)
        removed = remotes.unset(home, vault)
    if as_json:
        cli._emit_json({"vault": str(vault), "removed": removed})
    else:
        cli._emit(f"remote of {vault} removed" if removed else f"{vault} had no saved remote")


@app.command("sync", cls=cli.Command)
def sync(ctx: typer.Context, json_out: cli.JsonOpt = False) -> None:
    """Pull what changed on the remote, then push what changed here; merge where both did.

    A note changed on both sides is merged when both only added lines; otherwise this
    vault's version wins and the other is kept whole under .conflict/.
    """
    from ..sync.link import sync_on_open

    as_json = cli._want_json(ctx, json_out)
    token = sync_on_open.set(False)  # one run, reported whole
    try:
        with (
            cli._memory(ctx, as_json) as mem,
            cli.ProgressBar(not as_json and cli._is_terminal(), "syncing", PROGRESS_MIN_FILES) as progress,
        ):
            try:
                report = mem.sync(progress)
            except CairnError as err:
                status = mem.sync_status() or {}
                if status.get("outbox"):
                    err.message += f"; {status['outbox']} change(s) wait in the outbox"
                raise
    finally:
        sync_on_open.reset(token)
    if as_json:
        cli._emit_json(report.to_dict())
        return
    cli._emit(
        f"pulled {len(report.pulled)}, pushed {len(report.pushed)}, deleted {len(report.deleted)}, "
        f"merged {len(report.merged)}, conflicts {len(report.conflicts)}, outbox {report.outbox} "
        f"({report.requests} requests, {report.seconds:.2f} s)"
    )
    for path in report.conflicts:
        cli._emit(f"conflict: the remote's version is kept at {path}")
    for line in report.failed:
        cli._emit(f"not synced yet: {line}", err=True)
