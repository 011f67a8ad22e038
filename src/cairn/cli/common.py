"""What every command module shares: the Typer ``app``, the global options, opening the vault,
printing, and turning errors into one line and an exit code.

``CairnError`` and ``OSError`` are caught here and only here: ``error: <message>`` on stderr (and
``{"error": ...}`` on stdout under ``--json``) and the error's exit code. Usage errors (a missing
argument, a bad option value) are one line too, with a pointer to the command's ``--help``.
"""

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import CairnError, InvalidInput
from ..face_text import in_user_words, os_error_text
from .plain import use_plain_coercion

if TYPE_CHECKING:
    from ..memory import Memory

# The usage-error class of the click that Typer runs on (Typer keeps its own copy of click).
_UsageError = typer.BadParameter.__base__

# The library's parameter names, as a person types them on this command line.
USER_WORDS = {"expected": "--expected {}", "depth": "--depth {}"}

IO_ERROR_CODE = "io_error"


class _PlainAndOneLine:
    """What the CLI's groups and commands add to Typer's: plain value conversion (see ``plain``),
    usage errors in one line (and JSON on stdout under --json, as every other error is)."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        params = super().get_params(ctx)  # type: ignore[misc]
        use_plain_coercion(params)
        return params

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except _UsageError as err:
            _usage_exit(err, "--json" in args)

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except _UsageError as err:  # an unknown command, or one the subcommand did not catch
            _usage_exit(err, bool(ctx.params.get("json_out")))


class Group(_PlainAndOneLine, TyperGroup):
    """Typer's group, as the CLI's commands are."""


class Command(_PlainAndOneLine, TyperCommand):
    """Typer's command, with plain value conversion and one-line usage errors."""


def _usage_exit(err: Any, json_flag: bool) -> NoReturn:
    """``error: Missing argument 'TITLE'. (see cairn write --help)`` and exit 2."""
    ctx = getattr(err, "ctx", None)
    message = err.format_message() if hasattr(err, "format_message") else str(err)
    message = " ".join(message.split())
    path = ctx.command_path if ctx is not None else "cairn"
    _emit(f"error: {message} (see {path} --help)", err=True)
    settings = ctx.find_root().obj if ctx is not None else None
    if json_flag or getattr(settings, "json", False):
        _emit_json({"error": {"code": InvalidInput.code, "message": message}})
    raise typer.Exit(2)


# -- the application --------------------------------------------------------------------------

app = typer.Typer(
    cls=Group,
    name="cairn",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Indexing fewer notes than this is quick enough that a progress bar would only flicker.
PROGRESS_MIN_NOTES = 200


@dataclass
class Settings:
    vault: Path | None
    home: Path | None
    scope: str | None
    json: bool
    as_agent: bool = False


JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (UTF-8) on stdout.")]


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        _emit(f"cairn {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    vault: Annotated[
        Path | None,
        typer.Option(
            "--vault",
            metavar="PATH",
            envvar="CAIRN_VAULT",
            help="Vault folder (default: <home>/vault).",
            show_default=False,
        ),
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            metavar="PATH",
            envvar="CAIRN_HOME",
            help="State folder for the index and tokens (default: ~/.cairn).",
            show_default=False,
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            metavar="SCOPE",
            help="Scope to work in: user, agent:<id>, group:<id>, workspace:<slug> (default: user).",
        ),
    ] = None,
    json_out: JsonOpt = False,
    as_agent: Annotated[
        bool,
        typer.Option(
            "--as-agent",
            help='Act for an agent: with write_mode = "propose" in cairn.toml, writes become proposals '
            "a person approves (cairn proposals); never approves.",
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Cairn: long-term memory for AI agents, kept as Markdown notes with a SQLite index.

    Notes are plain Markdown files in the vault; the index can always be rebuilt from them
    (cairn reindex). Nothing is ever sent over the network.
    """
    ctx.obj = Settings(vault=vault, home=home, scope=scope, json=json_out, as_agent=as_agent)


# -- output -----------------------------------------------------------------------------------


def _settings(ctx: typer.Context) -> Settings:
    obj = ctx.find_root().obj
    if isinstance(obj, Settings):
        return obj
    return Settings(vault=None, home=None, scope=None, json=False)


def _emit(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Write ``text`` as UTF-8, whatever the stream's locale says."""
    stream = sys.stderr if err else sys.stdout
    data = text + ("\n" if nl else "")
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data)
        stream.flush()
        return
    stream.flush()
    buffer.write(data.encode("utf-8"))
    buffer.flush()


def _emit_json(data: Any) -> None:
    _emit(json.dumps(data, ensure_ascii=False, indent=2))


def _fail(err: CairnError, as_json: bool) -> NoReturn:
    message = in_user_words(err.message, USER_WORDS)
    _emit(f"error: {message}", err=True)
    if as_json:
        _emit_json({"error": {"code": err.code, "message": message}})
    raise typer.Exit(err.exit_code)


def _fail_os(exc: OSError, as_json: bool, vault: Path | None = None) -> NoReturn:
    message = os_error_text(exc, vault)
    _emit(f"error: {message}", err=True)
    if as_json:
        _emit_json({"error": {"code": IO_ERROR_CODE, "message": message}})
    raise typer.Exit(1)


class Proposed(Exception):
    """An agent's write became a proposal (``cairn --as-agent`` in approval mode, see
    ``proposals.AgentMemory``): ``_memory`` prints the answer and exits 0."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer.get("proposal"))
        self.answer = answer


def _emit_proposed(done: Proposed, as_json: bool) -> NoReturn:
    if as_json:
        _emit_json(done.answer)
    else:
        pid = done.answer["proposal"]
        _emit(
            f"proposal {pid}: {done.answer['kind']} {done.answer['target']} is waiting for a person "
            f"(until {done.answer['expires']}); nothing is written until `cairn proposals approve {pid}`"
        )
    raise typer.Exit(0)


def _is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def _memory(
    ctx: typer.Context,
    as_json: bool,
    *,
    allow_scopes: list[str] | None = None,
    watch: bool = False,
    first_index_progress: bool = True,
    create: bool = False,
) -> Iterator["Memory"]:
    """Open the vault named by the global options; turn any CairnError or OSError into a clean exit.

    ``allow_scopes`` confines the Memory to those scopes; without a global ``--scope`` the
    first of them becomes the default scope. One-shot commands scan the files once and need no
    watcher; ``serve`` asks for one. On a terminal, a vault never indexed is indexed first behind
    a progress bar (the command would index it anyway, silently).
    """
    from ..memory import Memory

    settings = _settings(ctx)
    opened: Path | None = None
    try:
        # Only ``init`` (and the first write) makes a vault: a mistyped --vault must not.
        kwargs: dict[str, Any] = {"home": settings.home, "watch": watch, "create": create}
        if settings.scope is not None:
            kwargs["scope"] = settings.scope
        if allow_scopes:
            kwargs["allow_scopes"] = allow_scopes
            kwargs.setdefault("scope", allow_scopes[0])
        mem = Memory.open(settings.vault, **kwargs)
        opened = mem.vault
        try:
            if first_index_progress and not as_json and _is_terminal() and _never_indexed(mem):
                bar = ProgressBar(enabled=True, label="indexing the vault")
                try:
                    mem.reindex(progress=bar)
                finally:
                    bar.close()
            if settings.as_agent:
                from .proposals import AgentMemory

                yield AgentMemory(mem)  # type: ignore[misc]
            else:
                yield mem
        finally:
            mem.close()
    except Proposed as done:
        _emit_proposed(done, as_json)
    except CairnError as err:
        _fail(err, as_json)
    except OSError as exc:
        _fail_os(exc, as_json, opened)


def _never_indexed(mem: "Memory") -> bool:
    return mem.vault.is_dir() and mem.indexed_files == 0


@contextmanager
def _guard(as_json: bool) -> Iterator[None]:
    try:
        yield
    except CairnError as err:
        _fail(err, as_json)
    except OSError as exc:
        _fail_os(exc, as_json)


def _want_json(ctx: typer.Context, json_out: bool) -> bool:
    return json_out or _settings(ctx).json


class ProgressBar:
    """A (done, total) progress callback: shows a Rich bar once the work turns out to be large
    (``min_total`` items; a shorter run would only flicker). Also a context manager that closes it."""

    def __init__(self, enabled: bool, label: str = "reindexing", min_total: int | None = None) -> None:
        self.enabled = enabled
        self.label = label
        self.min_total = PROGRESS_MIN_NOTES if min_total is None else min_total
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if total < self.min_total:
                self.enabled = False
                return
            from rich.progress import Progress

            self.progress = Progress(transient=True)
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=total)
        self.progress.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


# -- shared options and parsing ---------------------------------------------------------------

SCOPES_HELP = (
    "Scopes to read, comma separated or repeated (--scopes user,agent:bot); each must be allowed "
    "(cairn.toml allow_scopes, or the global --scope). Default: the global --scope, else user."
)
ScopesOpt = Annotated[list[str] | None, typer.Option("--scopes", metavar="SCOPES", help=SCOPES_HELP)]


def _scopes(values: list[str] | None) -> list[str] | None:
    """``["user,agent:a", "group:g"]`` -> ``["user", "agent:a", "group:g"]``; None when not given.

    Given but empty (``--allow-scope "$AGENT_SCOPE"`` with the variable unset) is an error: read
    as "not given", it would lift a confinement the caller meant to set.
    """
    if values is None:
        return None
    scopes = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not scopes:
        raise InvalidInput(f"no scope given in {values!r}: name at least one, e.g. agent:bot")
    return scopes


# -- tables -----------------------------------------------------------------------------------

# The fewest cells a column is narrowed to, so that on a narrow terminal every column stays visible.
MIN_COLUMN_CELLS = 8


def _rich_table(
    columns: list[str],
    rows: list[list[Any]],
    *,
    keep: frozenset[str] = frozenset(),
    dim: frozenset[int] = frozenset(),
) -> None:
    """Print a table. Columns named in ``keep`` (ids, times) are not wrapped while the terminal
    leaves the other columns ``MIN_COLUMN_CELLS`` each; on a narrower one they fold too, rather
    than squeeze the others out of sight. A cell may be a ``rich.text.Text`` (highlighted);
    rows whose index is in ``dim`` are shown dim."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    cells = [[cell if isinstance(cell, Text) else Text(cell) for cell in row] for row in rows]
    widths = [
        max(
            cell_len(line) for text in (column, *(row[i].plain for row in cells)) for line in text.split("\n")
        )
        for i, column in enumerate(columns)
    ]
    least = [min(width, MIN_COLUMN_CELLS) for width in widths]
    borders = 3 * len(columns) + 1
    kept = {i for i, column in enumerate(columns) if column in keep}
    if sum(widths[i] if i in kept else least[i] for i in range(len(columns))) + borders > console.width:
        kept = set()
    table = Table()
    for i, column in enumerate(columns):
        table.add_column(
            column, no_wrap=i in kept, overflow="fold", min_width=None if i in kept else least[i]
        )
    for number, row in enumerate(cells):
        table.add_row(*row, style="dim" if number in dim else None)
    console.print(table)


def _short_time(iso: str) -> str:
    """``2026-11-30T04:42:51+00:00`` -> ``2026-11-30 04:42`` for tables (JSON keeps the full time)."""
    return iso[:16].replace("T", " ") if len(iso) >= 16 and iso[10:11] == "T" else iso


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _print_mapping(data: dict[str, Any]) -> None:
    for key, value in data.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list, tuple)) else value
        _emit(f"{key}: {shown}")
