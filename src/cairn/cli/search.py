"""Commands that find and gather notes: search, context, snapshot."""

import re
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..query_filters import MAX_CONTEXT_DEPTH, WHERE_HELP, check_window, parse_where
from . import common
from .common import (
    Command,
    JsonOpt,
    ScopesOpt,
    _emit,
    _emit_json,
    _guard,
    _indent,
    _memory,
    _scopes,
    _want_json,
    app,
)

if TYPE_CHECKING:
    from ..models import Hit

# A hit whose coverage (share of the query's weighted words the note holds) is below this is a
# weak match whatever its rank: see "the relevance bar" in docs/search.md.
RELEVANCE_BAR = 0.5


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


def _weak(hit: "Hit") -> bool:
    return hit.coverage is not None and hit.coverage < RELEVANCE_BAR


def _coverage_mark(hit: "Hit") -> str:
    if hit.coverage is None:
        return ""
    mark = f"coverage {round(hit.coverage * 100)}%"
    return f"{mark}, weak match" if _weak(hit) else mark


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def match_pattern(query: str) -> "re.Pattern[str] | None":
    """A regex for the words of ``query`` as they may appear in a snippet: an English word by its
    stem-like prefix (``migrations`` finds ``migration``), a Chinese run whole or by its pairs."""
    parts: list[str] = []
    for word in re.findall(r"\w+", query):
        if _CJK.search(word):
            parts.append(re.escape(word))
            parts += [re.escape(word[i : i + 2]) for i in range(len(word) - 1)] if len(word) > 2 else []
        elif len(word) >= 2:
            stem = word if len(word) <= 4 else word[: max(4, len(word) - 2)]
            parts.append(rf"\b{re.escape(stem)}\w*")
    if not parts:
        return None
    parts.sort(key=len, reverse=True)  # the whole run before its pairs
    return re.compile("|".join(parts), re.IGNORECASE)


def _print_hits(hits: "list[Hit]", query: str = "") -> None:
    if not hits:
        _emit("no matching notes", err=True)
        return
    if common._is_terminal():
        _print_hits_rich(hits, query)
        return
    blocks = []
    for hit in hits:
        # In a pipe only a weak hit says so, so that scripts reading the marks see what they saw.
        marks = ", ".join([_hit_marks(hit)] + ([_coverage_mark(hit)] if _weak(hit) else []))
        block = f"{hit.title}  [{hit.permalink}]  ({marks})\n  {hit.path}:{hit.line}"
        if hit.snippet:
            block += "\n" + _indent(hit.snippet)
        blocks.append(block)
    _emit("\n\n".join(blocks))


def _print_hits_rich(hits: "list[Hit]", query: str) -> None:
    """One block per hit: the title line, ``path:line`` on a line of its own (never cut), and the
    snippet across the whole width with the query's words highlighted; weak hits are dim."""
    from rich.console import Console, Group
    from rich.padding import Padding
    from rich.text import Text

    console = Console(highlight=False)
    pattern = match_pattern(query)
    blocks = []
    for number, hit in enumerate(hits):
        weak = _weak(hit)
        head = Text()
        head.append(hit.title, style="bold")
        head.append(f"  [{hit.permalink}]", style="cyan")
        marks = _hit_marks(hit)
        head.append(f"  {marks}", style="dim")
        if hit.coverage is not None:
            head.append(f"  {_coverage_mark(hit)}", style="yellow" if weak else "green")
        where = Text(f"  {hit.path}:{hit.line}", style="magenta", no_wrap=True, overflow="ignore")
        parts: list[Any] = [head, where]
        if hit.snippet:
            snippet = Text(hit.snippet)
            if pattern is not None:
                snippet.highlight_regex(pattern, style="bold reverse")
            parts.append(Padding(snippet, (0, 0, 0, 4), expand=False))
        if number:
            parts.insert(0, Text(""))
        blocks.append(Group(*parts, fit=False) if not weak else _dimmed(Group(*parts, fit=False)))
    for block in blocks:
        console.print(block, soft_wrap=False)


def _dimmed(renderable: Any) -> Any:
    from rich.styled import Styled

    return Styled(renderable, "dim")


@app.command(cls=Command)
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
    with _guard(as_json):
        where_map = parse_where(where or [])
        wanted = _scopes(scopes)
    with _memory(ctx, as_json) as mem:
        check_window(since, until, mem.tz)
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
            scope=wanted,
        )
        damaged = 0 if as_json else mem.status()["damaged"]
    if as_json:
        _emit_json({"hits": [h.to_dict() for h in hits]})
        return
    _print_hits(hits, query)
    if damaged:
        _emit(
            f"note: {damaged} damaged file{'s were' if damaged > 1 else ' was'} skipped (cairn doctor names them)",
            err=True,
        )


@app.command(cls=Command)
def context(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(metavar="URL", help="memory://permalink (a * wildcard is allowed).")],
    depth: Annotated[
        int,
        typer.Option(
            "--depth",
            metavar="N",
            min=0,
            max=MAX_CONTEXT_DEPTH,
            help=f"How many relation hops to follow (0 to {MAX_CONTEXT_DEPTH}).",
        ),
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
        indent = "  " * max(node.depth - 1, 0)
        reached = f"{node.note.title}  [{node.note.permalink}]"
        if not node.via:
            _emit(f"  {indent}{reached}")
        elif getattr(node, "direction", "out") == "in":  # the reached note holds the relation
            _emit(f"  {indent}{node.from_permalink} <-{node.via}- {reached}")
        else:
            _emit(f"  {indent}{node.from_permalink} -{node.via}-> {reached}")
    for rel in result.unresolved:
        _emit(f"  unresolved: {rel.type} [[{rel.target}]]")
    if not result.primary:
        _emit("no notes match that URL", err=True)


@app.command(cls=Command)
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
