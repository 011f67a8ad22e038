"""Commands on single notes: write, append, edit, read, list, delete, restore, trash."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import DamagedNote, InvalidInput
from ..query_filters import scalar
from . import common
from .common import (
    Command,
    JsonOpt,
    _emit,
    _emit_json,
    _guard,
    _memory,
    _rich_table,
    _short_time,
    _want_json,
    app,
)

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import NoteSummary


def parse_fields(pairs: list[str]) -> dict[str, Any] | None:
    fields: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--field")
        fields[key.strip()] = scalar(raw.strip())
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


def _print_summaries(notes: "list[NoteSummary]") -> None:
    if not notes:
        _emit("no notes", err=True)
        return
    if common._is_terminal():
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


@app.command(cls=Command)
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


@app.command(cls=Command)
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


@app.command(cls=Command)
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


@app.command(cls=Command)
def read(
    ctx: typer.Context,
    identifier: Annotated[
        str, typer.Argument(metavar="PERMALINK", help="Permalink, memory://permalink or vault-relative path.")
    ],
    json_out: JsonOpt = False,
) -> None:
    """Print a note's file exactly as it is (a damaged one too, with a warning on stderr)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        try:
            note = mem.read(identifier)
        except DamagedNote as err:
            raw = None if as_json else _damaged_file(mem, identifier)
            if raw is None:
                raise
            _emit(f"warning: {err.message}; printed as it is", err=True)
            sys.stdout.flush()
            if hasattr(sys.stdout, "buffer"):
                sys.stdout.buffer.write(raw)
            else:
                sys.stdout.write(raw.decode("utf-8", "replace"))
            sys.stdout.flush()
            return
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(note.text, nl=False)


@app.command("list", cls=Command)
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


@app.command(cls=Command)
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
        note = mem.delete(permalink, reason=reason)  # its path is where the trash keeps it
    if as_json:
        _emit_json(note.to_dict())
    else:
        _emit(
            f"deleted {note.permalink} (moved to {note.path}; cairn restore {note.permalink} brings it back)"
        )


@app.command(cls=Command)
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


def _damaged_file(mem: "Memory", identifier: str) -> bytes | None:
    """The bytes of the vault file ``identifier`` names, read without following a link; None
    when it is not a vault path (Memory.read has already checked its scope)."""
    from ..vault import bare_permalink

    rel = bare_permalink(identifier).replace("\\", "/")
    if not rel.endswith(".md") or rel.startswith("/") or ".." in rel.split("/"):
        return None
    from ..errors import NotFound
    from ..fileio import read_file

    try:
        return read_file(mem.vault, rel)[0]
    except (NotFound, OSError):
        return None


@app.command(cls=Command)
def trash(
    ctx: typer.Context,
    json_out: JsonOpt = False,
) -> None:
    """List the trash of the scopes you may touch: permalink, title, when deleted, path.

    cairn restore PERMALINK brings a note back (the newest copy, when several share a permalink).
    """
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json, first_index_progress=False) as mem:
        notes = [note for scope in mem.allow_scopes for note in mem.trash(scope=scope)]
    entries = [
        {
            "scope": n.scope,
            "path": n.path,
            "permalink": n.permalink,
            "title": n.title,
            "deleted": str(n.frontmatter.get("deleted", "")),
            "reason": n.frontmatter.get("deleted_reason"),
        }
        for n in notes
    ]
    if as_json:
        _emit_json({"trash": entries})
        return
    if not entries:
        _emit("the trash is empty", err=True)
        return
    if common._is_terminal():
        _rich_table(
            ["permalink", "title", "deleted", "path"],
            [[e["permalink"], e["title"], _short_time(e["deleted"]), e["path"]] for e in entries],
            keep=frozenset({"permalink", "deleted"}),
        )
        return
    _emit(
        "\n".join("\t".join([e["permalink"], e["deleted"], e["path"], e["title"]]).rstrip() for e in entries)
    )
