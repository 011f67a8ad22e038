"""Running a dream with a model: any OpenAI-compatible ``/chat/completions`` endpoint that does
tool calling (OpenAI, DeepSeek, Qwen, a local Ollama or vLLM ...).

The model gets the canonical prompt (``prompts/dream.md``) and two tools, ``dream_load`` and
``dream_apply``; ``converse`` runs the tool-calling loop with a bounded number of turns and a
deadline. The API key comes from ``CAIRN_DREAM_API_KEY`` or ``<home>/dream-key`` (mode 0600),
never from the vault, which syncs. Nothing else is ever sent anywhere.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import CairnError, DreamRunError, InvalidInput
from ..vault import now_iso
from . import dream, dream_config
from .files import Place

ENV_KEY = "CAIRN_DREAM_API_KEY"
ENV_BASE_URL = "CAIRN_DREAM_BASE_URL"
ENV_MODEL = "CAIRN_DREAM_MODEL"
KEY_FILE = "dream-key"
MAX_TURNS = 12
REQUEST_TIMEOUT = 120.0  # seconds for one model answer
RUN_DEADLINE = 600.0  # seconds for the whole conversation
MAX_NOTE_CHARS = 500

ToolCall = Callable[[str, dict[str, Any]], Any]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "dream_load",
            "description": "Load the scope: sections, entities and open observations, each with its rev.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "dream_apply",
            "description": "Apply decisions (each checked against its rev) and log them with a summary.",
            "parameters": {
                "type": "object",
                "properties": {
                    "decisions": {
                        "type": "array",
                        "items": {"type": "object"},
                        "description": "Decisions as described in the instructions.",
                    },
                    "summary": {"type": "string", "description": "What this dream did and why."},
                },
                "required": ["decisions", "summary"],
            },
        },
    },
]


def prompt(scope: str) -> str:
    """The canonical dream prompt, shipped with Cairn, for ``scope``."""
    text = resources.files("cairn.governance").joinpath("prompts/dream.md").read_text(encoding="utf-8")
    return text.replace("{scope}", scope)


def api_key(home: Path) -> str | None:
    """The key from ``CAIRN_DREAM_API_KEY``, else ``<home>/dream-key``; None when neither is set
    (a local endpoint needs none).

    Raises:
        InvalidInput: the key file can be read by other users of this machine.
    """
    key = os.environ.get(ENV_KEY, "").strip()
    if key:
        return key
    path = home / KEY_FILE
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
        raise InvalidInput(f"{path} can be read by other users: run `chmod 600 {path}` and try again")
    return path.read_text(encoding="utf-8").strip() or None


def endpoint(base_url: str) -> str:
    url = base_url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise InvalidInput(f"base_url {base_url!r} must start with http:// or https://")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def converse(
    *,
    base_url: str,
    model: str,
    key: str | None,
    system: str,
    user: str,
    call_tool: ToolCall,
    max_turns: int = MAX_TURNS,
    timeout: float = REQUEST_TIMEOUT,
    deadline: float = RUN_DEADLINE,
    transport: Any = None,
) -> dict[str, Any]:
    """Talk to the model until it answers without calling a tool.

    Returns:
        ``{"turns", "tool_calls": [names], "applies": [reports], "note"}``.
    Raises:
        DreamRunError: the endpoint cannot be reached, answers an error or nonsense, or the model
            has not finished within ``max_turns`` turns or ``deadline`` seconds.
    """
    import httpx

    url = endpoint(base_url)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    called: list[str] = []
    applies: list[dict[str, Any]] = []
    start = time.monotonic()
    with httpx.Client(timeout=timeout, transport=transport) as client:
        for turn in range(1, max_turns + 1):
            if time.monotonic() - start > deadline:
                raise DreamRunError(
                    f"the dream took longer than {deadline:.0f} s and was stopped after {turn - 1} turns"
                )
            body = {"model": model, "messages": messages, "tools": TOOLS, "tool_choice": "auto"}
            try:
                response = client.post(url, headers=headers, json=body)
            except httpx.HTTPError as exc:
                raise DreamRunError(f"could not reach the dream model at {url}: {exc}") from exc
            if response.status_code != 200:
                raise DreamRunError(
                    f"the dream model at {url} answered HTTP {response.status_code}: {response.text[:300]}"
                )
            message = _message(response)
            calls = message.get("tool_calls") or []
            if not calls:
                note = message.get("content") or ""
                return {"turns": turn, "tool_calls": called, "applies": applies, "note": str(note).strip()}
            messages.append(
                {"role": "assistant", "content": message.get("content") or None, "tool_calls": calls}
            )
            for call in calls:
                name, result = _run_call(call, call_tool)
                called.append(name)
                if name == "dream_apply" and isinstance(result, dict) and "results" in result:
                    applies.append(result)
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.get("id", ""),
                        "content": json.dumps(result, ensure_ascii=False),
                    }
                )
    raise DreamRunError(f"the model did not finish within {max_turns} turns; nothing more was applied")


def _message(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise DreamRunError(
            f"the dream model's answer is not a chat completion: {response.text[:300]}"
        ) from exc
    if not isinstance(message, dict):
        raise DreamRunError("the dream model's answer holds no message")
    return message


def _run_call(call: Any, call_tool: ToolCall) -> tuple[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if name not in ("dream_load", "dream_apply"):
        return str(name), {"error": f"unknown tool {name!r}: use dream_load or dream_apply"}
    raw = function.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError):
        return name, {"error": "the arguments are not a JSON object"}
    if not isinstance(args, dict):
        return name, {"error": "the arguments are not a JSON object"}
    try:
        return name, call_tool(name, args)
    except CairnError as exc:
        return name, {"error": f"{exc.code}: {exc.message}"}


def memory_tools(place: Place, trigger: str) -> ToolCall:
    """The tools, answered by this process's own Memory."""
    memory = place.memory

    def call(name: str, args: dict[str, Any]) -> Any:
        if name == "dream_load":
            return memory.dream_load(scope=place.scope)
        decisions = args.get("decisions")
        if isinstance(decisions, str):  # some models send the list as a JSON string
            try:
                decisions = json.loads(decisions)
            except ValueError as exc:
                raise InvalidInput("decisions is not valid JSON") from exc
        # agent=True: the model decides, so in approval mode its decisions wait for a person
        return memory.dream_apply(
            decisions, str(args.get("summary") or ""), scope=place.scope, trigger=trigger, agent=True
        )

    return call


def run(
    place: Place,
    *,
    trigger: str = "manual",
    call_tool: ToolCall | None = None,
    transport: Any = None,
    max_turns: int = MAX_TURNS,
) -> dict[str, Any]:
    """One dream of the scope with the model named in dream.json (or ``CAIRN_DREAM_MODEL`` /
    ``CAIRN_DREAM_BASE_URL``); the outcome goes to dream.json (``last_*``) and log.md.

    Raises:
        DreamOff: the dream is off.
        InvalidInput: no model or base_url is set.
        DreamRunError: the conversation failed (it is recorded before this is raised).
    """
    config = dream_config.require_on(place)
    model = config.model or os.environ.get(ENV_MODEL, "").strip()
    base_url = config.base_url or os.environ.get(ENV_BASE_URL, "").strip()
    if not model or not base_url:
        raise InvalidInput(
            "the dream has no model: set one with `cairn dream on --model NAME --base-url URL` "
            f"(or {ENV_MODEL} and {ENV_BASE_URL})"
        )
    key = api_key(place.home)
    today = datetime.now(place.tz).strftime("%Y-%m-%d %H:%M")
    user = (
        f"Run the dream for scope {place.scope} now ({today}, trigger: {trigger}). "
        "Load, decide, apply, then answer with a one-line note."
    )
    outcome: dict[str, Any]
    try:
        outcome = converse(
            base_url=base_url,
            model=model,
            key=key,
            system=prompt(place.scope),
            user=user,
            call_tool=call_tool or memory_tools(place, trigger),
            max_turns=max_turns,
            transport=transport,
        )
    except DreamRunError as exc:
        _record(place, trigger, model, "error", exc.message, {})
        raise
    status = "ok" if outcome["applies"] else "no-apply"
    note = outcome["note"][:MAX_NOTE_CHARS] or "(the model gave no note)"
    _record(place, trigger, model, status, note, outcome)
    return {
        "scope": place.scope,
        "status": status,
        "model": model,
        "trigger": trigger,
        **outcome,
        "note": note,
    }


def _record(place: Place, trigger: str, model: str, status: str, note: str, outcome: dict[str, Any]) -> None:
    from ..guard import find_secrets

    if find_secrets(note):  # the model's words go into the vault: never a credential
        note = "(the model's note was not kept: it looked like it held a credential)"
    with place.writing():
        dream_config.update(place, last_run_at=now_iso(place.tz), last_status=status, last_note=note)
        dream.append_log(
            place,
            {
                "kind": "run",
                "trigger": trigger,
                "model": model,
                "status": status,
                "turns": outcome.get("turns", 0),
                "applies": len(outcome.get("applies", ())),
            },
            note,
        )


def scheduled(place: Place, now: datetime | None = None, **kwargs: Any) -> dict[str, Any] | None:
    """Run the daily dream if it is due; None when it is not.

    The day is stamped in dream.json before the run starts, under the vault's write lock: a
    restart, or a second process ticking at the same time, never runs it twice on one day.
    """
    now = now or datetime.now(place.tz)
    with place.writing():
        config = dream_config.read(place)
        if not dream_config.due(config, now):
            return None
        dream_config.update(place, last_run_day=now.date().isoformat(), last_status="started")
    try:
        return run(place, trigger="schedule", **kwargs)
    except CairnError as exc:
        return {"scope": place.scope, "status": "error", "trigger": "schedule", "error": exc.message}
