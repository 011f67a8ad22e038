"""The governance commands of ``cairn``: ``observe``, ``projection`` and ``dream ...``.

A thin face over ``Memory``; importing the module registers the commands.
"""

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import InvalidInput
from .common import Command, Group, _emit, _emit_json, _memory, _want_json, app

if TYPE_CHECKING:
    pass

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (UTF-8) on stdout.")]

dream_app = typer.Typer(
    name="dream",
    help="The dream: consolidate the inbox into sections and entities (off until `cairn dream on`).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def observe(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The observation (at most 2,000 characters).")],
    tag: Annotated[
        list[str] | None, typer.Option("--tag", "-t", metavar="TAG", help="A tag; repeatable.")
    ] = None,
    durable: Annotated[
        bool | None,
        typer.Option(
            "--durable/--note-only",
            help="--durable: meant for long-term memory (a dream may promote it from one source); "
            "--note-only: a scratch note (dropped unless it confirms a new stable fact). Default: neutral.",
            show_default=False,
        ),
    ] = None,
    source: Annotated[
        str | None, typer.Option("--source", metavar="S", help="Who or what observed it (default: cli).")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Write a draft observation into the scope's inbox, for the next dream to decide on.

    Identical open content is not written twice (the answer says duplicate). The inbox holds at
    most observations_max (cairn.toml, default 200) open observations: then run a dream.
    """
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        result = mem.observe(text, tags=tag or [], durable=durable, source=source or "cli")
    if as_json:
        _emit_json({k: result[k] for k in ("id", "duplicate", "open", "capacity", "path")})
        return
    said = "already in the inbox as" if result["duplicate"] else "observed:"
    _emit(f"{said} {result['id']} ({result['open']}/{result['capacity']} open)")


def projection(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Print the scope's sections in order, cut at inject_char_cap (cairn.toml, default 6,000)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        result = mem.projection()
    if as_json:
        _emit_json(result)
        return
    if not result["text"]:
        _emit("no sections yet", err=True)
        return
    _emit(result["text"].rstrip("\n"))


@dream_app.command("status")
def dream_status(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Show dream.json (switch, model, schedule, last run), the inbox count and the last log entries."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        status = mem.dream_status()
    if as_json:
        _emit_json(status)
        return
    for key in (
        "scope",
        "enabled",
        "model",
        "base_url",
        "daily_at",
        "last_run_day",
        "last_run_at",
        "last_status",
    ):
        _emit(f"{key}: {'' if status[key] is None else status[key]}")
    _emit(f"inbox: {status['open']}/{status['capacity']} open")
    if status["last_note"]:
        _emit(f"last_note: {status['last_note']}")


def _switch(ctx: typer.Context, as_json: bool, **changes: Any) -> None:
    with _memory(ctx, as_json) as mem:
        config = mem.dream_switch(**changes)
    if as_json:
        _emit_json(config)
        return
    state = "on" if config["enabled"] else "off"
    extra = f", daily at {config['daily_at']}" if config["daily_at"] else ""
    _emit(f"dream {state} (model: {config['model'] or 'not set'}{extra})")


@dream_app.command("on")
def dream_on(
    ctx: typer.Context,
    model: Annotated[
        str | None, typer.Option("--model", metavar="NAME", help="Model name for `dream run`.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", metavar="URL", help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1."
        ),
    ] = None,
    daily_at: Annotated[
        str | None,
        typer.Option(
            "--daily-at",
            metavar="HH:MM",
            help="Run once a day after this time while `cairn serve` runs; '' clears.",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Turn the dream on (and set its model, endpoint and daily time). The API key is read from
    CAIRN_DREAM_API_KEY or <home>/dream-key (mode 0600), never from the vault."""
    _switch(ctx, _want_json(ctx, json_out), enabled=True, model=model, base_url=base_url, daily_at=daily_at)


@dream_app.command("off")
def dream_off(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Turn the dream off: dream apply and run refuse; observe, read, search and load still work."""
    _switch(ctx, _want_json(ctx, json_out), enabled=False)


@dream_app.command("load")
def dream_load(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Print the scope's sections, entities and open observations, each with its rev (JSON)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        state = mem.dream_load()
    _emit_json(state)  # meant for a program: JSON either way


def _read_decisions(source: str) -> tuple[Any, str]:
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {source!r}: {exc.strerror or exc}") from exc
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{source!r} is not UTF-8 JSON: {exc}") from exc
    if not isinstance(raw, dict) or "decisions" not in raw:
        raise InvalidInput(f'{source!r} must hold {{"summary": "...", "decisions": [...]}}')
    summary = raw.get("summary") or ""
    if not isinstance(summary, str):
        raise InvalidInput("summary must be text")
    return raw["decisions"], summary


@dream_app.command("apply")
def dream_apply(
    ctx: typer.Context,
    file: Annotated[
        str, typer.Argument(metavar="FILE", help='JSON {"summary", "decisions"}; - reads stdin.')
    ],
    json_out: JsonOpt = False,
) -> None:
    """Apply a dream's decisions; each is checked against the rev it names and applied on its own.

    A decision whose target changed since the load fails with rev-conflict; the others apply.
    Exit status 0 even when some decisions failed: the report says which.
    """
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        decisions, summary = _read_decisions(file)
        report = mem.dream_apply(decisions, summary, trigger="cli")
    if as_json:
        _emit_json(report)
        return
    for r in report["results"]:
        detail = r.get("target", "") if r["status"] == "applied" else r["reason"]
        _emit(f"#{r['index']} {r['kind']}: {r['status']}" + (f" ({detail})" if detail else ""))
    _emit(f"{report['applied']} applied, {report['failed']} failed; logged in {report['log']}")


@dream_app.command("run")
def dream_run(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Run one dream now with the model set by `cairn dream on` (an OpenAI-compatible endpoint)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = mem.dream_run(trigger="cli")
    if as_json:
        _emit_json(report)
        return
    applied = sum(a.get("applied", 0) for a in report["applies"])
    _emit(
        f"dream {report['status']}: {applied} decisions applied in {report['turns']} turns. {report['note']}"
    )


app.command("observe", cls=Command)(observe)
app.command("projection", cls=Command)(projection)
for _command in dream_app.registered_commands:
    _command.cls = Command
app.add_typer(dream_app, name="dream", cls=Group)
