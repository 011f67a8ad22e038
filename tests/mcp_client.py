"""Helpers for driving the MCP server through the SDK's own in-process client in tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import Client

from cairn import Memory
from cairn.mcp_server import build_server


@asynccontextmanager
async def connect(memory: Memory) -> AsyncIterator[Client]:
    async with Client(build_server(memory)) as client:
        yield client


async def call(client: Client, tool: str, **arguments: object) -> dict:
    """Call a tool that must succeed; return its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def call_error(client: Client, tool: str, **arguments: object) -> str:
    """Call a tool that must fail; return the message the model would read (never a traceback)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, arguments, result.structured_content)
    text = result.content[0].text
    assert "Traceback" not in text
    return text
