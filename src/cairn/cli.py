"""The ``cairn`` command line: a thin face over :class:`cairn.Memory`.

Each command parses its arguments, makes one ``Memory`` call and formats the result: a Rich table
on a terminal, plain text in a pipe, JSON with ``--json``. ``CairnError`` is caught here and only
here: ``error: <message>`` on stderr and the error's ``exit_code``.

Rich (tables, progress) and the MCP server are imported only where they are used, and the plain
Click help formatter is used, so that ``cairn --help`` and ``cairn search`` start fast. For the
same reason plain option values are converted here rather than by Typer's Pydantic adapters (see
``_plain_coercion``), and this module does without ``from __future__ import annotations``: with
it, Typer evaluates every command's annotation strings again at each start (~25 ms).
"""

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from .errors import CairnError, InvalidInput

if TYPE_CHECKING:
    from .memory import Memory
    from .models import Hit, NoteSummary

# -- plain value conversion (startup speed) ---------------------------------------------------

_CANONICAL_INT = re.compile(r"-?[1-9][0-9]{0,17}|0")  # int(text) and Pydantic agree on these
_SLOW = object()  # "not a plain value: let Typer convert it"


def _plain_coercion(param: Any) -> Any:
    """A converter for one Typer parameter that takes plain values without Pydantic, or None.

    Typer converts every parameter through a Pydantic TypeAdapter; importing Pydantic and building
    the adapters costs more (~150 ms) than a whole ``cairn search`` on 10,000 notes. Cairn's
    parameters are all plain (str, int, bool, Path, list[str]), so the values a command normally
    gets are converted here as Typer would convert them. Anything else (a malformed or
    out-of-range number, an unreadable path, bytes...) goes to Typer's own conversion, so errors
    and their messages are Typer's, unchanged.
    """
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None)
    if desc is None or info is None or getattr(desc, "file_annotation", None) is not None:
        return None
    if getattr(info, "parser", None) is not None:
        return None
    annotation = desc.annotation
    multi = bool(param.multiple or param.nargs == -1)
    if multi:
        if annotation != list[str]:
            return None

        def fast(value: Any) -> Any:
            if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
                return list(value)
            return _SLOW

    elif annotation is str:

        def fast(value: Any) -> Any:
            return value if type(value) is str else _SLOW

    elif annotation is bool:  # flags already give a bool (Typer skips them); --help gives None

        def fast(value: Any) -> Any:
            return value if type(value) is bool else _SLOW

    elif annotation is int and not getattr(info, "clamp", False):
        low, high = info.min, info.max

        def fast(value: Any) -> Any:
            if type(value) is str and _CANONICAL_INT.fullmatch(value):
                value = int(value)
            if type(value) is not int:
                return _SLOW
            in_range = (low is None or value >= low) and (high is None or value <= high)
            return value if in_range else _SLOW

    elif annotation is Path and _default_path_checks(info):

        def fast(value: Any) -> Any:
            if type(value) is not str or not value or "\0" in value:
                return _SLOW
            # Typer's only check for a plain Path option: if the path exists it must be readable.
            if os.path.exists(value) and not os.access(value, os.R_OK):
                return _SLOW
            return Path(value)

    else:
        return None

    def coerce(value: Any, *, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if multi else None
        converted = fast(value)
        if converted is _SLOW:
            return type(param).get_runtime_param(param).coerce(value, param=param, ctx=ctx)
        return converted

    return coerce


def _default_path_checks(info: Any) -> bool:
    return (
        getattr(info, "path_type", None) is None
        and not getattr(info, "exists", True)
        and getattr(info, "file_okay", False)
        and getattr(info, "dir_okay", False)
        and not getattr(info, "writable", True)
        and not getattr(info, "resolve_path", True)
        and not getattr(info, "allow_dash", True)
    )


class _PlainRuntimeParam:
    """Stands in for Typer's runtime parameter (same ``coerce`` call) on the plain path."""

    __slots__ = ("coerce",)

    def __init__(self, coerce: Any) -> None:
        self.coerce = coerce


def _use_plain_coercion(params: list[Any]) -> None:
    for param in params:
        if getattr(param, "_cairn_plain", False) or not hasattr(type(param), "get_runtime_param"):
            continue
        param._cairn_plain = True
        coerce = _plain_coercion(param)
        if coerce is not None:
            runtime = _PlainRuntimeParam(coerce)
            param.get_runtime_param = lambda runtime=runtime: runtime


class _Group(TyperGroup):
    """Typer's group, with the Pydantic-free conversion of plain values (see ``_plain_coercion``)."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        params = super().get_params(ctx)
        _use_plain_coercion(params)
        return params


class _Command(TyperCommand):
    """Typer's command, with the Pydantic-free conversion of plain values (see ``_plain_coercion``),
    and usage errors (a missing argument, a bad --where) that also print JSON under --json."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        params = super().get_params(ctx)
        _use_plain_coercion(params)
        return params

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except _UsageError as err:
            _usage_error_as_json(err, ctx, "--json" in args)
            raise

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _UsageError as err:
            _usage_error_as_json(err, ctx, bool(ctx.params.get("json_out")))
            raise


# The usage-error class of the click that Typer runs on (Typer keeps its own copy of click).
_UsageError = typer.BadParameter.__base__


def _usage_error_as_json(err: Exception, ctx: typer.Context, json_flag: bool) -> None:
    """Under --json, say on stdout what the usage message says on stderr, as every other error
    does (``_fail``): a script reads stdout and should never find it empty."""
    settings = ctx.find_root().obj
    if json_flag or getattr(settings, "json", False):
        message = err.format_message() if hasattr(err, "format_message") else str(err)
        _emit_json({"error": {"code": InvalidInput.code, "message": message}})


# -- the application --------------------------------------------------------------------------

app = typer.Typer(
    cls=_Group,
    name="cairn",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Reindexing fewer notes than this is quick enough that a progress bar would only flicker.
PROGRESS_MIN_NOTES = 200


@dataclass
class Settings:
    vault: Path | None
    home: Path | None
    scope: str | None
    json: bool


JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (UTF-8) on stdout.")]


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
) -> None:
    """Cairn: long-term memory for AI agents, kept as Markdown notes with a SQLite index.

    Notes are plain Markdown files in the vault; the index can always be rebuilt from them
    (cairn reindex). Nothing is ever sent over the network.
    """
    ctx.obj = Settings(vault=vault, home=home, scope=scope, json=json_out)


# -- output helpers ---------------------------------------------------------------------------


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
    _emit(f"error: {err.message}", err=True)
    if as_json:
        _emit_json({"error": {"code": err.code, "message": err.message}})
    raise typer.Exit(err.exit_code)


def _is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def _memory(
    ctx: typer.Context, as_json: bool, *, allow_scopes: list[str] | None = None, watch: bool = False
) -> Iterator["Memory"]:
    """Open the vault named by the global options; turn any CairnError into a clean exit.

    ``allow_scopes`` confines the Memory to those scopes; without a global ``--scope`` the
    first of them becomes the default scope. One-shot commands scan the files once and need no
    watcher; ``serve`` asks for one.
    """
    from .memory import Memory

    settings = _settings(ctx)
    try:
        kwargs: dict[str, Any] = {"home": settings.home, "watch": watch}
        if settings.scope is not None:
            kwargs["scope"] = settings.scope
        if allow_scopes:
            kwargs["allow_scopes"] = allow_scopes
            kwargs.setdefault("scope", allow_scopes[0])
        mem = Memory.open(settings.vault, **kwargs)
        try:
            yield mem
        finally:
            mem.close()
    except CairnError as err:
        _fail(err, as_json)


@contextmanager
def _guard(as_json: bool) -> Iterator[None]:
    try:
        yield
    except CairnError as err:
        _fail(err, as_json)


def _want_json(ctx: typer.Context, json_out: bool) -> bool:
    return json_out or _settings(ctx).json


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


# -- argument parsing -------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INT = re.compile(r"[+-]?\d+")
_WHERE = re.compile(
    r"^\s*(?P<field>[^\s=<>!:]+)\s*"
    r"(?:(?::(?P<word>[a-z]+)=)|(?P<sym>>=|<=|!=|==|=|>|<))"
    r"\s*(?P<value>.*?)\s*$",
    re.DOTALL,
)
_SYMBOL_OPS = {"=": None, "==": None, "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte"}
_WORD_OPS = {"eq": None, "ne": "$ne", "gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte", "in": "$in"}

WHERE_HELP = (
    "Front-matter filter, repeatable (all must hold): FIELD=VALUE, FIELD!=VALUE, FIELD>N, FIELD>=N, "
    "FIELD<N, FIELD<=N, FIELD:in=A,B,C (one of), or the word forms FIELD:eq= :ne= :gt= :gte= :lt= :lte= "
    "(no shell quoting needed). Numbers become numbers, true/false become booleans. "
    "Examples: --where status=active --where 'confidence>0.7' --where status:in=active,paused"
)


def _scalar(text: str) -> Any:
    """``"3"`` -> 3, ``"0.7"`` -> 0.7, ``"true"`` -> True; anything else stays a string."""
    if _INT.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return text


def parse_where(clauses: list[str]) -> dict[str, Any] | None:
    """Turn ``--where`` clauses into the ``where`` mapping of :meth:`Memory.search`.

    Raises typer.BadParameter on bad syntax or on two clauses that cannot both be expressed.
    """
    if not clauses:
        return None
    where: dict[str, Any] = {}
    for clause in clauses:
        match = _WHERE.match(clause)
        if not match:
            raise typer.BadParameter(
                f"{clause!r} is not FIELD=VALUE, FIELD>N, FIELD:in=A,B ... (see cairn search --help)",
                param_hint="--where",
            )
        name, word, sym, raw = match.group("field", "word", "sym", "value")
        if word is not None and word not in _WORD_OPS:
            raise typer.BadParameter(
                f"{clause!r}: unknown operator ':{word}=' (use one of {', '.join(_WORD_OPS)})",
                param_hint="--where",
            )
        op = _WORD_OPS[word] if word is not None else _SYMBOL_OPS[sym]
        if sym is not None and raw[:1] in ("<", ">", "=", "!"):
            raise typer.BadParameter(f"{clause!r}: doubled operator", param_hint="--where")
        if raw == "" and op not in (None, "$ne"):
            raise typer.BadParameter(
                f"{clause!r}: a value is missing after the operator", param_hint="--where"
            )
        value: Any
        if op == "$in":
            value = [_scalar(part.strip()) for part in raw.split(",") if part.strip()]
            if not value:
                raise typer.BadParameter(f"{clause!r}: ':in=' needs at least one value", param_hint="--where")
        else:
            value = _scalar(raw)
        if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(value, bool):
            raise typer.BadParameter(f"{clause!r}: compare with a number, date or text", param_hint="--where")

        if name not in where:
            where[name] = value if op is None else {op: value}
            continue
        existing = where[name]
        if op is None or not isinstance(existing, dict):
            # Plain equality cannot share a field with another condition in the where mapping.
            if op is None and existing == value:
                continue
            raise typer.BadParameter(
                f"{clause!r} conflicts with an earlier --where on {name!r}: equality cannot be combined "
                "with another condition on the same field",
                param_hint="--where",
            )
        if op in existing and existing[op] != value:
            raise typer.BadParameter(
                f"{clause!r}: {name!r} already has a {op} condition", param_hint="--where"
            )
        existing[op] = value
    return where


def parse_fields(pairs: list[str]) -> dict[str, Any] | None:
    fields: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--field")
        fields[key.strip()] = _scalar(raw.strip())
    return fields or None


def _read_body_file(source: str) -> str:
    try:
        if source == "-":
            stdin = sys.stdin
            data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
        else:
            data = Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read --body-file {source!r}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = "stdin" if source == "-" else repr(source)
        raise InvalidInput(
            f"--body-file {where} is not UTF-8 text (bad byte at offset {exc.start}); convert it to UTF-8 first"
        ) from exc


# -- formatting -------------------------------------------------------------------------------


# The fewest cells a column is narrowed to, so that on a narrow terminal every column stays visible.
MIN_COLUMN_CELLS = 8


def _rich_table(columns: list[str], rows: list[list[str]], *, keep: frozenset[str] = frozenset()) -> None:
    """Print a table. Columns named in ``keep`` (ids, times) are not wrapped while the terminal
    leaves the other columns ``MIN_COLUMN_CELLS`` each; on a narrower one they fold too, rather
    than squeeze the others out of sight."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    widths = [
        max(cell_len(line) for text in (column, *(row[i] for row in rows)) for line in text.split("\n"))
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
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def _short_time(iso: str) -> str:
    """``2026-11-30T04:42:51+00:00`` -> ``2026-11-30 04:42`` for tables (JSON keeps the full time)."""
    return iso[:16].replace("T", " ") if len(iso) >= 16 and iso[10:11] == "T" else iso


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _hit_marks(hit: "Hit") -> str:
    """Scope and lifecycle marks shown beside a hit: ``agent:bot, expires 2026-01-01T00:00:00+00:00``."""
    marks = [hit.scope]
    if hit.sensitive:
        marks.append("sensitive")
    if hit.expires:
        marks.append(f"expires {hit.expires}")
    if hit.superseded_by:
        marks.append(f"superseded by {', '.join(hit.superseded_by)}")
    return ", ".join(marks)


def _print_hits(hits: "list[Hit]") -> None:
    if not hits:
        _emit("no matching notes", err=True)
        return
    if _is_terminal():
        _rich_table(
            ["title", "permalink", "scope", "path:line", "snippet"],
            [[h.title, h.permalink, _hit_marks(h), f"{h.path}:{h.line}", h.snippet] for h in hits],
            keep=frozenset({"permalink"}),
        )
        return
    blocks = []
    for hit in hits:
        block = f"{hit.title}  [{hit.permalink}]  ({_hit_marks(hit)})\n  {hit.path}:{hit.line}"
        if hit.snippet:
            block += "\n" + _indent(hit.snippet)
        blocks.append(block)
    _emit("\n\n".join(blocks))


def _print_summaries(notes: "list[NoteSummary]") -> None:
    if not notes:
        _emit("no notes", err=True)
        return
    if _is_terminal():
        _rich_table(
            ["title", "permalink", "type", "tags", "modified"],
            [[n.title, n.permalink, n.type, ", ".join(n.tags), _short_time(n.modified)] for n in notes],
            keep=frozenset({"permalink", "modified"}),
        )
        return
    lines = []
    for n in notes:
        tags = " ".join(f"#{t}" for t in n.tags)
        lines.append("\t".join([n.permalink, n.type, n.modified, n.title, tags]).rstrip())
    _emit("\n".join(lines))


def _print_mapping(data: dict[str, Any]) -> None:
    for key, value in data.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list, tuple)) else value
        _emit(f"{key}: {shown}")


# -- commands ---------------------------------------------------------------------------------


@app.command(cls=_Command)
def init(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Create (or open) the vault and show where the vault and its index live."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        status = mem.status()
    if as_json:
        _emit_json(status)
        return
    _emit(f"vault: {status.get('vault', '')}")
    _emit(f"index: {status.get('index', '')}")


@app.command(cls=_Command)
def write(
    ctx: typer.Context,
    title: Annotated[
        str,
        typer.Argument(metavar="TITLE", help="Note title; also its file name (unsafe characters replaced)."),
    ],
    type_: Annotated[
        str,
        typer.Option("--type", metavar="TYPE", help="Note type: note, course, task, preference, fact ..."),
    ] = "note",
    folder: Annotated[
        str, typer.Option("--folder", metavar="FOLDER", help="Folder inside the scope, e.g. courses.")
    ] = "",
    tag: Annotated[list[str] | None, typer.Option("--tag", metavar="TAG", help="Tag; repeatable.")] = None,
    obs: Annotated[
        list[str] | None,
        typer.Option(
            "--obs", metavar="OBS", help='Observation "[category] text #tag (context)"; repeatable.'
        ),
    ] = None,
    rel: Annotated[
        list[str] | None,
        typer.Option("--rel", metavar="REL", help='Relation "type [[Target]] (context)"; repeatable.'),
    ] = None,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="KEY=VALUE",
            help="Extra front-matter field KEY=VALUE (numbers parsed); repeatable.",
        ),
    ] = None,
    body: Annotated[
        str | None, typer.Option("--body", metavar="TEXT", help="Free Markdown body text.")
    ] = None,
    body_file: Annotated[
        str | None,
        typer.Option("--body-file", metavar="FILE", help="Read the body from a UTF-8 file; '-' reads stdin."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a note with the same title.")
    ] = False,
    sensitive: Annotated[
        bool, typer.Option("--sensitive", help="Mark the note sensitive (hidden from search).")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Create a note (refuses to replace an existing one unless --overwrite)."""
    as_json = _want_json(ctx, json_out)
    if body is not None and body_file is not None:
        raise typer.BadParameter("give --body or --body-file, not both", param_hint="--body-file")
    fields = parse_fields(field or [])
    with _guard(as_json):
        text = _read_body_file(body_file) if body_file is not None else (body or "")
    with _memory(ctx, as_json) as mem:
        note = mem.write(
            title,
            body=text,
            type=type_,
            folder=folder,
            tags=tag or (),
            observations=obs or (),
            relations=rel or (),
            fields=fields,
            sensitivity="sensitive" if sensitive else None,
            overwrite=overwrite,
        )
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(f"wrote {note.path} (permalink: {note.permalink})")


@app.command(cls=_Command)
def append(
    ctx: typer.Context,
    permalink: Annotated[str, typer.Argument(metavar="PERMALINK", help="Permalink of an existing note.")],
    line: Annotated[
        str,
        typer.Argument(
            metavar="LINE", help='"[category] text #tag (context)" or "type [[Target]] (context)".'
        ),
    ],
    json_out: JsonOpt = False,
) -> None:
    """Add one observation or relation to an existing note (never creates a note)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        note = mem.append(permalink, line)
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(f"appended to {note.path} (permalink: {note.permalink})")


@app.command(cls=_Command)
def edit(
    ctx: typer.Context,
    permalink: Annotated[str, typer.Argument(metavar="PERMALINK", help="Permalink of the note to edit.")],
    find: Annotated[str, typer.Option("--find", metavar="TEXT", help="Literal text to find.")],
    replace: Annotated[str, typer.Option("--replace", metavar="TEXT", help="Text to put in its place.")],
    expected: Annotated[
        int,
        typer.Option(
            "--expected",
            metavar="N",
            min=1,
            help="How many times --find must occur; otherwise nothing changes.",
        ),
    ] = 1,
    json_out: JsonOpt = False,
) -> None:
    """Literal find/replace in a note; changes nothing unless the count matches --expected."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        note = mem.edit(permalink, find, replace, expected=expected)
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(f"edited {note.path} (permalink: {note.permalink})")


@app.command(cls=_Command)
def read(
    ctx: typer.Context,
    identifier: Annotated[
        str, typer.Argument(metavar="PERMALINK", help="Permalink, memory://permalink or vault-relative path.")
    ],
    json_out: JsonOpt = False,
) -> None:
    """Print a note's file exactly as it is."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        note = mem.read(identifier)
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(note.text, nl=False)


@app.command(cls=_Command)
def search(
    ctx: typer.Context,
    query: Annotated[
        str,
        typer.Argument(metavar="QUERY", help="Keywords (Chinese or English); empty lists filtered notes."),
    ] = "",
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="TAG", help="Only notes with this tag; repeatable (all)."),
    ] = None,
    type_: Annotated[
        str | None, typer.Option("--type", metavar="TYPE", help="Only notes of this type.")
    ] = None,
    folder: Annotated[
        str | None, typer.Option("--folder", metavar="FOLDER", help="Only notes under this folder.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="WHEN", help="Modified at or after: ISO date/time or 7d, 12h, 2w."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="WHEN", help="Modified at or before: ISO date/time or 7d."),
    ] = None,
    where: Annotated[list[str] | None, typer.Option("--where", metavar="COND", help=WHERE_HELP)] = None,
    sensitive: Annotated[bool, typer.Option("--sensitive", help="Include sensitive notes.")] = False,
    expired: Annotated[
        bool, typer.Option("--expired", help="Include notes whose expires date has passed.")
    ] = False,
    scopes: ScopesOpt = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, help="Most hits to show.")] = 10,
    json_out: JsonOpt = False,
) -> None:
    """Search notes by keyword and structure; best first, ties newest first.

    Each hit names its scope; --scopes searches several allowed scopes at once.

    \b
    --where examples:
      status=active              {"status": "active"}
      'confidence>0.7'           {"confidence": {"$gt": 0.7}}
      priority:gte=2             {"priority": {"$gte": 2}}
      status!=done               {"status": {"$ne": "done"}}
      status:in=active,paused    {"status": {"$in": ["active", "paused"]}}
    """
    as_json = _want_json(ctx, json_out)
    where_map = parse_where(where or [])
    with _memory(ctx, as_json) as mem:
        hits = mem.search(
            query,
            tags=tag or (),
            type=type_,
            folder=folder,
            since=since,
            until=until,
            where=where_map,
            include_sensitive=sensitive,
            include_expired=expired,
            limit=limit,
            scope=_scopes(scopes),
        )
    if as_json:
        _emit_json({"hits": [h.to_dict() for h in hits]})
    else:
        _print_hits(hits)


@app.command("list", cls=_Command)
def list_(
    ctx: typer.Context,
    folder: Annotated[
        str | None, typer.Option("--folder", metavar="FOLDER", help="Only notes under this folder.")
    ] = None,
    tag: Annotated[str | None, typer.Option("--tag", metavar="TAG", help="Only notes with this tag.")] = None,
    type_: Annotated[
        str | None, typer.Option("--type", metavar="TYPE", help="Only notes of this type.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, help="Most notes to show.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """List notes, by folder, tag or type."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        notes = mem.list(folder=folder, tag=tag, type=type_, limit=limit)
    if as_json:
        _emit_json({"notes": [n.to_dict() for n in notes]})
    else:
        _print_summaries(notes)


@app.command(cls=_Command)
def context(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(metavar="URL", help="memory://permalink (a * wildcard is allowed).")],
    depth: Annotated[
        int, typer.Option("--depth", metavar="N", min=0, help="How many relation hops to follow.")
    ] = 1,
    timeframe: Annotated[
        str | None,
        typer.Option(
            "--timeframe", metavar="WHEN", help="Keep related notes modified since: 7d, 2w or an ISO date."
        ),
    ] = None,
    sensitive: Annotated[
        bool, typer.Option("--sensitive", help="Let wildcards and hops reach sensitive notes.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Show the notes a memory:// URL names and what their relations reach."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        result = mem.context(url, depth=depth, timeframe=timeframe, include_sensitive=sensitive)
    if as_json:
        _emit_json(result.to_dict())
        return
    for note in result.primary:
        _emit(f"{note.title}  [{note.permalink}]  {note.path}")
    for node in result.related:
        arrow = f"{node.from_permalink} -{node.via}->" if node.via else ""
        _emit(f"  {'  ' * max(node.depth - 1, 0)}{arrow} {node.note.title}  [{node.note.permalink}]".rstrip())
    for rel in result.unresolved:
        _emit(f"  unresolved: {rel.type} [[{rel.target}]]")
    if not result.primary:
        _emit("no notes match that URL", err=True)


@app.command(cls=_Command)
def delete(
    ctx: typer.Context,
    permalink: Annotated[str, typer.Argument(metavar="PERMALINK", help="Permalink of the note to delete.")],
    reason: Annotated[
        str | None, typer.Option("--reason", metavar="TEXT", help="Why; kept with the trashed note.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Soft-delete a note: move it to the scope's .trash/ (cairn restore brings it back)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        note = mem.delete(permalink, reason=reason)
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(f"deleted {note.permalink} (moved to {note.path})")


@app.command(cls=_Command)
def restore(
    ctx: typer.Context,
    permalink: Annotated[str, typer.Argument(metavar="PERMALINK", help="Permalink of a trashed note.")],
    json_out: JsonOpt = False,
) -> None:
    """Bring a soft-deleted note back from the trash."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        note = mem.restore(permalink)
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(f"restored {note.path} (permalink: {note.permalink})")


def _print_refresh(report: Any) -> None:
    _emit(
        f"scanned {report.scanned}: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.unchanged} unchanged, {len(report.damaged)} damaged"
        + (f", {len(report.skipped)} passed over" if report.skipped else "")
    )
    for damaged in report.damaged:
        _emit(f"damaged: {damaged.path}: {damaged.error}", err=True)
    for skipped in report.skipped:
        _emit(f"passed over: {skipped.path}: {skipped.error}", err=True)


@app.command(cls=_Command)
def refresh(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Bring the index up to date with the files (only changed files are read)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = mem.refresh()
    if as_json:
        _emit_json(report.to_dict())
    else:
        _print_refresh(report)


class _ProgressBar:
    """Reindex progress callback: shows a Rich bar once the vault turns out to be large."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if total < PROGRESS_MIN_NOTES:
                self.enabled = False
                return
            from rich.progress import Progress

            self.progress = Progress(transient=True)
            self.progress.start()
            self.task = self.progress.add_task("reindexing", total=total)
        self.progress.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


@app.command(cls=_Command)
def reindex(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Drop the index and rebuild it from the files (nothing in the vault changes)."""
    as_json = _want_json(ctx, json_out)
    bar = _ProgressBar(enabled=not as_json and _is_terminal())
    try:
        with _memory(ctx, as_json) as mem:
            report = mem.reindex(progress=bar)
    finally:
        bar.close()
    if as_json:
        _emit_json(report.to_dict())
    else:
        _print_refresh(report)


@app.command(cls=_Command)
def doctor(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Check the vault and index; exit 1 when files are damaged or permalinks collide."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = mem.doctor()
    if as_json:
        _emit_json(report.to_dict())
    else:
        _emit(f"vault: {report.vault}\nindex: {report.index}\nnotes: {report.notes}")
        _emit(f"trashed: {report.trashed}\nunresolved relations: {report.unresolved_relations}")
        for damaged in report.damaged:
            _emit(f"damaged: {damaged.path}: {damaged.error}")
        for permalink, paths in report.duplicate_permalinks:
            _emit(f"duplicate permalink {permalink}: {', '.join(paths)}")
        _emit("ok" if report.ok else "problems found (files are left as they are)")
    if not report.ok:
        raise typer.Exit(1)


@app.command(cls=_Command)
def snapshot(
    ctx: typer.Context,
    query: Annotated[
        str,
        typer.Argument(
            metavar="QUERY", help="What the next step is about; empty: preferences and sections only."
        ),
    ] = "",
    scopes: ScopesOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", metavar="N", min=1, help="Most notes to include.")] = 20,
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes",
            metavar="N",
            min=1,
            help="Most UTF-8 bytes of snapshot text (the final newline not counted).",
        ),
    ] = 8192,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", metavar="N", min=1, help="Most tokens (estimated high).")
    ] = 2048,
    json_out: JsonOpt = False,
) -> None:
    """Print memory to put in a prompt: bounded, escaped, wrapped in <memory_source>.

    Notes relevant to QUERY first, then confirmed preferences and sections. Sensitive, expired
    and superseded notes never appear; the closing <omitted> line says what was left out and why.
    The text is printed as is, followed by one newline; --json gives the text, items and counts.
    """
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        snap = mem.snapshot(
            query, scopes=_scopes(scopes), top_k=top_k, max_bytes=max_bytes, max_tokens=max_tokens
        )
    if as_json:
        _emit_json(snap.to_dict())
    else:
        _emit(snap.text)


@app.command(cls=_Command)
def status(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Show the vault path, index path, scope, allowed scopes and counts."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        data = mem.status()
    if as_json:
        _emit_json(data)
    else:
        _print_mapping(data)


@app.command(cls=_Command)
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
        if address and not http:
            given = " and ".join(f"--{name}" for name in address)
            raise InvalidInput(f"{given} apply to --http only; stdio has no address")
    with _memory(ctx, as_json, allow_scopes=allowed, watch=True) as mem:
        from . import mcp_server

        mem.start_background_sync()  # cairn.sync: a vault with a remote syncs every sync_interval
        if not http:
            # stdout is the protocol channel: say nothing there.
            mcp_server.serve_stdio(mem)
            return
        token = mcp_server.load_or_create_token(mem.home)
        mcp_server.serve_http(mem, token=token, **address)  # serve_http's defaults for the rest


from .cli_sync import register  # noqa: E402  (sync commands; the lead moves this at merge)

register(app)
