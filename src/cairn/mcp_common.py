"""What every module of MCP tools shares: argument types, annotations, result shaping, and the
translation of errors into the one sentence the model reads.

A module of tools for a new feature has a ``register(server, memory)`` function that adds its
tools with :func:`tool` (see ``mcp_trash`` for a small one); ``mcp_server.TOOL_MODULES`` lists it.
"""

import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .errors import CairnError
from .face_text import in_user_words, os_error_text
from .models import Note

ScopeArg = Annotated[
    str | None,
    Field(description="Scope, e.g. user or agent:<id> (default: the server's scope)."),
]
ScopesArg = Annotated[
    str | list[str] | None,
    Field(
        description="Scope or list of scopes, e.g. user or [user, agent:<id>] (default: the server's scope)."
    ),
]
Permalink = Annotated[str, Field(description="The note's permalink, as returned by search or list.")]
ToolResult = Annotated[CallToolResult, dict[str, Any]]
"""A result built here: compact JSON text plus the same data as structured content."""

READ_ONLY = ToolAnnotations(read_only_hint=True)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)

# The library's parameter names, as the model sends them.
TOOL_WORDS = {"expected": "expected_replacements={}"}

_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[_Fn], _Fn]:
    """Decorator: add ``fn`` to ``server`` as a tool; its docstring (dedented) is what the model reads."""

    def register(fn: _Fn) -> _Fn:
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)
        return fn

    return register


@contextmanager
def tool_errors(vault: Any = None) -> Iterator[None]:
    """Turn a CairnError or an OSError into a ToolError: the client gets ``isError`` and one
    sentence saying what went wrong (never a traceback, never an empty "Error executing tool")."""
    try:
        yield
    except CairnError as exc:
        raise ToolError(f"{exc.code}: {in_user_words(exc.message, TOOL_WORDS)}") from exc
    except OSError as exc:
        raise ToolError(f"io_error: {os_error_text(exc, vault)}") from exc


def result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    """Structured content plus a text block (compact JSON unless ``text`` is given)."""
    if text is None:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def brief(note: Note) -> dict[str, Any]:
    """The few fields a model needs to refer to a note it just changed."""
    return {
        "permalink": note.permalink,
        "title": note.title,
        "type": note.type,
        "tags": list(note.tags),
        "path": note.path,
        "modified": note.modified,
    }
