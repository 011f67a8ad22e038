"""The ``cairn`` command line: a thin face over :class:`cairn.Memory`.

Each command parses its arguments, makes one ``Memory`` call and formats the result: plain text
in a pipe, Rich on a terminal, JSON with ``--json``. Errors are one line on stderr and an exit
code (see ``common``).

Layout: ``common`` holds the Typer ``app``, the global options and the helpers every command
uses; each other module holds the commands of one concept (``notes``, ``search``, ``admin``,
``serve``). Rich, YAML and the MCP SDK are imported inside the commands that use them, and this
package does without ``from __future__ import annotations`` (Typer would evaluate every
annotation string again at each start), so that ``cairn search`` starts fast.

Adding commands (a new feature such as sync): write ``cairn/cli/sync.py``::

    from typing import Annotated
    import typer
    from .common import Command, JsonOpt, _emit, _emit_json, _memory, _want_json, app

    @app.command(cls=Command)
    def sync(ctx: typer.Context, json_out: JsonOpt = False) -> None:
        \"\"\"One line of help (a test checks that every command and option has help).\"\"\"
        as_json = _want_json(ctx, json_out)
        with _memory(ctx, as_json) as mem:   # CairnError/OSError -> one line + exit code
            report = mem.sync()
        _emit_json(report.to_dict()) if as_json else _emit(...)

then add ``sync`` to the import line below. ``cls=Command`` gives the fast value conversion and
the one-line usage errors; import heavy libraries inside the function body.
"""

from . import admin, conflicts, governance, notes, portable, proposals, search, serve, sync  # noqa: F401  (importing a module registers its commands)
from .common import app

__all__ = ["app"]
