"""A scripted stand-in for an OpenAI-compatible chat-completions endpoint (a hand-written fake:
no real model can run here). It follows the documented protocol of ``POST /v1/chat/completions``
with tool calling: a request holds ``model``, ``messages`` and ``tools``; an answer is
``{"choices": [{"message": {"role": "assistant", "content", "tool_calls": [{"id", "type":
"function", "function": {"name", "arguments": "<JSON text>"}}]}, "finish_reason"}]}``.

It serves on 127.0.0.1 (port 0: any free one) and plays a script: each step is a function of the
request's messages that returns the assistant message to answer with. Requests are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = Callable[[list[dict[str, Any]]], dict[str, Any]]


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message that calls one tool."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def last_tool_result(messages: list[dict[str, Any]]) -> Any:
    """The JSON content of the last ``tool`` message (what the model was just told)."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return json.loads(message["content"])
    raise AssertionError("no tool result in the conversation")


class ScriptedModel:
    def __init__(self, steps: list[Step], *, api_key: str | None = None, status: int = 200) -> None:
        self.steps = list(steps)
        self.api_key = api_key
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.url = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        if self.status != 200:
            return self.status, {"error": {"message": "scripted failure"}}
        if not self.steps:
            return 200, _completion(say("(script ended)"))
        message = self.steps.pop(0)(body["messages"])
        return 200, _completion(message)


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
    }


@contextmanager
def serve(model: ScriptedModel) -> Iterator[ScriptedModel]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length))
            model.headers.append(dict(self.headers.items()))
            if self.path != "/v1/chat/completions":
                status, data = 404, {"error": {"message": f"no route {self.path}"}}
            elif model.api_key and self.headers.get("Authorization") != f"Bearer {model.api_key}":
                status, data = 401, {"error": {"message": "bad key"}}
            else:
                status, data = model.answer(body)
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    model.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def consolidating_steps() -> list[Step]:
    """A model that loads, promotes every durable observation into ``preferences`` (with the
    rev it was given), drops every scratch note, and ends with a note."""

    def decide(messages: list[dict[str, Any]]) -> dict[str, Any]:
        state = last_tool_result(messages)
        section = next((s for s in state["sections"] if s["name"] == "preferences"), None)
        decisions = []
        for obs in state["observations"]:
            if obs["durable"] is True:
                decision = {
                    "kind": "promote_observation",
                    "observation": obs["id"],
                    "section": "preferences",
                    "text": obs["content"],
                }
                if section:
                    decision["rev"] = section["rev"]
                decisions.append(decision)  # the same rev for each: this apply's own writes count as loaded
            elif obs["durable"] is False:
                decisions.append(
                    {"kind": "drop_observation", "observation": obs["id"], "reason": "scratch note"}
                )
        return tool_call("dream_apply", {"decisions": decisions, "summary": "scripted dream"}, "call_2")

    def finish(messages: list[dict[str, Any]]) -> dict[str, Any]:
        report = last_tool_result(messages)
        return say(f"applied {report['applied']}, failed {report['failed']}")

    return [lambda _m: tool_call("dream_load", {}), decide, finish]
