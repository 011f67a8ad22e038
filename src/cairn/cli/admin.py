"""Commands that look after the vault and its index: init, refresh, reindex, doctor, status."""

from typing import Any

import typer

from ..face_text import config_warnings
from . import common
from .common import (
    Command,
    JsonOpt,
    ProgressBar,
    _emit,
    _emit_json,
    _memory,
    _print_mapping,
    _want_json,
    app,
)


@app.command(cls=Command)
def init(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Create (or open) the vault and show where the vault and its index live."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json, create=True) as mem:
        status = mem.status()
    if as_json:
        _emit_json(status)
        return
    _emit(f"vault: {status.get('vault', '')}")
    _emit(f"index: {status.get('index', '')}")


def _print_refresh(report: Any) -> None:
    _emit(
        f"scanned {report.scanned}: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.unchanged} unchanged, {len(report.damaged)} damaged"
        + (f", {len(report.skipped)} passed over" if report.skipped else "")
    )
    for damaged in report.damaged:
        _emit(f"damaged: {damaged.path}: {_reason(damaged.path, damaged.error)}", err=True)
    for skipped in report.skipped:
        _emit(f"passed over: {skipped.path}: {_reason(skipped.path, skipped.error)}", err=True)


def _reason(path: str, error: str) -> str:
    """The error without the path it often starts with, so that a line names the file once."""
    for prefix in (f"{path}: ", f"{path} "):
        if error.startswith(prefix):
            return error[len(prefix) :]
    return error


@app.command(cls=Command)
def refresh(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Bring the index up to date with the files (only changed files are read)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = mem.refresh()
    if as_json:
        _emit_json(report.to_dict())
    else:
        _print_refresh(report)


@app.command(cls=Command)
def reindex(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Drop the index and rebuild it from the files (nothing in the vault changes)."""
    as_json = _want_json(ctx, json_out)
    bar = ProgressBar(enabled=not as_json and common._is_terminal())
    try:
        with _memory(ctx, as_json) as mem:
            report = mem.reindex(progress=bar)
    finally:
        bar.close()
    if as_json:
        _emit_json(report.to_dict())
    else:
        _print_refresh(report)


@app.command(cls=Command)
def doctor(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Check the vault and index; exit 1 when files are damaged or permalinks collide."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        report = mem.doctor()
        warnings = config_warnings(mem.vault)
    if as_json:
        _emit_json(report.to_dict() | {"config_warnings": warnings})
    else:
        _emit(f"vault: {report.vault}\nindex: {report.index}\nnotes: {report.notes}")
        _emit(f"trashed: {report.trashed}\nunresolved relations: {report.unresolved_relations}")
        for damaged in report.damaged:
            _emit(f"damaged: {damaged.path}: {_reason(damaged.path, damaged.error)}")
        for warning in warnings:
            _emit(f"warning: {warning}")
        for permalink, paths in report.duplicate_permalinks:
            _emit(f"duplicate permalink {permalink}: {', '.join(paths)}")
        for path, rel_type, target in report.unresolved:
            _emit(f"unresolved: {path} -{rel_type}-> [[{target}]] (no note has that title or permalink yet)")
        for path in report.conflicts:
            _emit(
                f"conflict copy: {path} (the other side of a sync conflict: read it, keep what you need, delete it)"
            )
        _emit("ok" if report.ok else "problems found (files are left as they are)")
    if not report.ok:
        raise typer.Exit(1)


@app.command(cls=Command)
def status(ctx: typer.Context, json_out: JsonOpt = False) -> None:
    """Show the vault path, index path, scope, allowed scopes, counts and how changes are seen."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        data = mem.status()
        warnings = config_warnings(mem.vault)
    for warning in warnings:
        _emit(f"warning: {warning}", err=True)
    if as_json:
        _emit_json(data)
    else:
        _print_mapping(data)
