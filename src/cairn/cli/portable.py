"""Commands that move memory in and out, and the monthly journal: export, import, journal."""

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InvalidInput
from .common import (
    Command,
    JsonOpt,
    _emit,
    _emit_json,
    _guard,
    _memory,
    _scopes,
    _short_time,
    _want_json,
    app,
)

ScopeListOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scope",
        metavar="SCOPE",
        help="Export this scope (repeat for more; each must be allowed). Default: every allowed scope.",
    ),
]


@app.command(cls=Command)
def export(
    ctx: typer.Context,
    scope: ScopeListOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="Write the document to FILE (default: stdout)."),
    ] = None,
    sensitive: Annotated[
        bool, typer.Option("--sensitive", help="Include sensitive notes and #sensitive lines.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Write every note as one versioned JSON document (format cairn-export, version 1).

    Damaged files are not exported; each is named on stderr. Sensitive notes are left out
    unless --sensitive. Nothing of the index (hashes, line numbers) is in the document.
    """
    from ..portable.export import export as run_export
    from ..portable.export import write_document

    as_json = _want_json(ctx, json_out)
    with _guard(as_json):
        wanted = _scopes(scope)
    with _memory(ctx, as_json) as mem:
        done = run_export(mem, wanted, include_sensitive=sensitive)
        if out is not None:
            write_document(done, out)
    for damaged in done.skipped:
        _emit(f"skipped: {damaged.path}: {damaged.error}", err=True)
    if out is None:
        _emit(done.to_json(), nl=False)
        return
    if as_json:
        _emit_json(done.report(str(out)))
        return
    hidden = f" ({done.sensitive_left_out} sensitive left out)" if done.sensitive_left_out else ""
    skipped = f", {len(done.skipped)} damaged skipped" if done.skipped else ""
    _emit(f"exported {done.notes} notes to {out}{hidden}{skipped}")


@app.command(name="import", cls=Command)
def import_(
    ctx: typer.Context,
    source: Annotated[Path, typer.Argument(metavar="SOURCE", help="The file or folder to import.")],
    from_: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="KIND",
            help="What SOURCE is: cairn (an export file), basic-memory or obsidian (a folder), mem0 (JSON).",
        ),
    ] = "cairn",
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            metavar="SCOPE",
            help="Put every note in this scope (default: an export's own scopes, else the global --scope).",
        ),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite a different note found at a note's path.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would change (new / same / changed); write nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Import an export document (checked whole first), a basic-memory or Obsidian folder, or mem0's
    memories. The source is only read. A note that would overwrite a different one (without
    --replace) or take another's permalink stops the import before anything is written."""
    from ..portable.importing import import_source

    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = import_source(mem, source, kind=from_, scope=scope, replace=replace, dry_run=dry_run)
    if as_json:
        _emit_json(report.to_dict())
        return
    for item in report.notes:
        where = item["path"] or f"{item['scope']}: {item['title']}"
        reason = f"  ({item['reason']})" if item.get("reason") else ""
        _emit(f"{item['status']:8} {where}{reason}")
    for skipped in report.skipped:
        _emit(f"skipped: {skipped.source}: {skipped.reason}", err=True)
    counts = ", ".join(f"{n} {status}" for status, n in report.counts().items() if n)
    verb = "would import" if dry_run else "imported"
    _emit(f"{verb}: {counts or 'nothing'}" + (f"; {len(report.skipped)} skipped" if report.skipped else ""))


@app.command(cls=Command)
def journal(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(metavar="TEXT", help="The entry (line breaks become spaces).")
    ] = None,
    month: Annotated[
        str | None, typer.Option("--month", metavar="YYYY-MM", help="Print that month's journal instead.")
    ] = None,
    sensitive: Annotated[
        bool,
        typer.Option(
            "--sensitive",
            help="Mark the entry sensitive (never in a snapshot or search); with --month, show such entries.",
        ),
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Append a timestamped entry to this month's journal (<scope>/journal/YYYY-MM.md), or print a month."""
    from .. import journal as journal_mod

    as_json = _want_json(ctx, json_out)
    with _guard(as_json):
        if (text is None) == (month is None):
            raise InvalidInput("give either TEXT to write an entry or --month YYYY-MM to read one")
    with _memory(ctx, as_json) as mem:
        note = mem.journal_month(month) if month is not None else mem.journal(text or "", sensitive=sensitive)
    if month is None:
        last = journal_mod.entries(note, include_sensitive=True)[-1]
        if as_json:
            _emit_json({"path": note.path, "permalink": note.permalink, "entry": last.to_dict()})
        else:
            _emit(f"journal: added to {note.path} (line {last.line})")
        return
    shown = journal_mod.entries(note, include_sensitive=sensitive)
    if as_json:
        _emit_json({"month": month, "path": note.path, "entries": [e.to_dict() for e in shown]})
        return
    for entry in shown:
        mark = " [sensitive]" if entry.sensitive else ""
        _emit(f"{_short_time(entry.time)}  {entry.text}  · {entry.origin}{mark}")
    if not shown:
        _emit(f"no entries to show in {note.path}")
