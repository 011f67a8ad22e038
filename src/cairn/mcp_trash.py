"""MCP tools for the trash: ``memory_restore`` brings a deleted note back.

Also the example of a tool module for a new feature: one ``register(server, memory)`` function
that adds its tools with ``mcp_common.tool``, listed in ``mcp_server.TOOL_MODULES``.
"""

from mcp.server.mcpserver import MCPServer

from .mcp_common import ADDITIVE, Permalink, ScopeArg, ToolResult, brief, result, tool, tool_errors
from .memory import Memory


def register(server: MCPServer, memory: Memory) -> None:
    """Add the trash tools to ``server``, calling ``memory``."""

    @tool(server, ADDITIVE)
    def memory_restore(permalink: Permalink, scope: ScopeArg = None) -> ToolResult:
        """Bring a deleted note back from the trash (the most recently deleted one, if several
        share the permalink). Use it when the user asks to undo a memory_delete."""
        with tool_errors(memory.vault):
            note = memory.restore(permalink, scope=scope)
        return result(
            brief(note) | {"restored": note.permalink},
            f"Restored 「{note.title}」 as {note.permalink} at {note.path}.",
        )
