"""``cairn conflicts list | keep PATH mine|theirs``: the ``.conflict/`` copies a sync left, and
settling one; thin over ``Memory.conflicts`` and ``resolve_conflict`` (cairn.sync.conflicts).
A merge by hand is done in the note itself (or the web panel), then ``keep PATH mine``.
Importing the module registers the commands."""

from typing import Annotated

import typer

from ..errors import InvalidInput
from . import common as cli
from .common import app

conflicts_app = typer.Typer(
    name="conflicts",
    cls=cli.Group,
    help="Conflict copies a sync left under .conflict/: list them, keep one side.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(conflicts_app, name="conflicts")


@conflicts_app.command("list", cls=cli.Command)
def conflicts_list(ctx: typer.Context, json_out: cli.JsonOpt = False) -> None:
    """Each conflict copy, the note it belongs to, the device it came from and when."""
    as_json = cli._want_json(ctx, json_out)
    with cli._memory(ctx, as_json) as mem:
        items = mem.conflicts(texts=False)
    if as_json:
        cli._emit_json({"conflicts": items})
        return
    for item in items:
        cli._emit(
            f"{item['path']}  ->  {item['target'] or '?'}  (from {item['origin'] or '?'}, {item['time'] or '?'})"
        )
    cli._emit(f"{len(items)} conflict cop{'y' if len(items) == 1 else 'ies'}")


@conflicts_app.command("keep", cls=cli.Command)
def conflicts_keep(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(metavar="PATH", help="The copy's path, .conflict/...")],
    side: Annotated[
        str,
        typer.Argument(metavar="mine|theirs", help="mine: the note stays; theirs: it takes the copy's text."),
    ],
    json_out: cli.JsonOpt = False,
) -> None:
    """Settle a conflict copy and remove it: keep mine (the note as it is) or theirs (the copy)."""
    as_json = cli._want_json(ctx, json_out)
    with cli._guard(as_json):
        if cli._settings(ctx).as_agent:
            raise InvalidInput("only a person settles a sync conflict: run this command without --as-agent")
        if side not in ("mine", "theirs"):
            raise InvalidInput(
                f"keep {side!r}: use mine or theirs (merge by hand in the note or the web panel)"
            )
    with cli._memory(ctx, as_json) as mem:
        answer = mem.resolve_conflict(path, keep=side)
    if as_json:
        cli._emit_json(answer)
    else:
        cli._emit(f"kept {side} for {answer['target']}; removed {answer['path']}")
