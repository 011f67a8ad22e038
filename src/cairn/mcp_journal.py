"""MCP tool for the monthly journal: ``memory_journal`` appends one timestamped entry."""

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from . import journal
from .mcp_common import ADDITIVE, ScopeArg, ToolResult, brief, result, tool, tool_errors
from .memory import Memory


def register(server: MCPServer, memory: Memory) -> None:
    """Add the journal tool to ``server``, calling ``memory``."""

    @tool(server, ADDITIVE)
    def memory_journal(
        text: Annotated[str, Field(description="What happened in this session, in a sentence or three.")],
        sensitive: Annotated[
            bool, Field(description="True for private matters: kept out of snapshots and search.")
        ] = False,
        scope: ScopeArg = None,
    ) -> ToolResult:
        """Append a timestamped entry to this month's journal (journal/YYYY-MM.md): a log of
        sessions and what came of them. Append-only; for lasting facts write or append to a note."""
        with tool_errors(memory.vault):
            note = memory.journal(text, sensitive=sensitive, scope=scope)
        entry = journal.entries(note, include_sensitive=True)[-1]
        return result(
            brief(note) | {"entry": entry.to_dict()},
            f"Added to {note.path} at {entry.time}.",
        )
