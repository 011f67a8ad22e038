"""The dream executor against a scripted OpenAI-compatible server (tests/scripted_model.py), the
once-a-day schedule across a restart, a dream driven through the MCP client, and a real endpoint
when CAIRN_DREAM_BASE_URL, CAIRN_DREAM_API_KEY and CAIRN_DREAM_MODEL are set."""

from __future__ import annotations

import functools
import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest

from cairn import Memory
from cairn.errors import InvalidInput
from cairn.governance import dream_runner, schedule
from cairn.governance.dream_config import DreamOff
from cairn.governance.dream_runner import DreamRunError
from mcp_client import call, call_error, connect
from scripted_model import ScriptedModel, consolidating_steps, say, serve, tool_call


def _log_heads(vault: Path) -> list[dict]:
    text = (vault / "user" / "log.md").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.startswith("{")]


def _seed(memory: Memory) -> tuple[dict, dict, dict]:
    return (
        memory.observe("偏好用 Vim 写代码", durable=True),
        memory.observe("今天中午吃了面", durable=False),
        memory.observe("maybe likes jazz"),
    )


def test_run_against_the_scripted_model(memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_DREAM_API_KEY", "test-key-123")
    keep, scratch, neutral = _seed(memory)
    with serve(ScriptedModel(consolidating_steps(), api_key="test-key-123")) as model:
        memory.dream_switch(True, model="scripted-1", base_url=model.url)
        report = memory.dream_run()
    assert report["status"] == "ok" and report["turns"] == 3
    assert report["tool_calls"] == ["dream_load", "dream_apply"]
    assert report["note"] == "applied 2, failed 0"
    first = model.requests[0]
    assert first["model"] == "scripted-1"
    assert {t["function"]["name"] for t in first["tools"]} == {"dream_load", "dream_apply"}
    system = first["messages"][0]["content"]
    assert "durable: true" in system and "corroboration" in system and "scratch" in system
    assert model.headers[0]["Authorization"] == "Bearer test-key-123"
    assert "偏好用 Vim 写代码" in memory.projection()["text"]
    open_ids = [o["id"] for o in memory.dream_load()["observations"]]
    assert open_ids == [neutral["id"]]  # neutral, single source: stays in the inbox
    status = memory.dream_status()
    assert status["last_status"] == "ok" and status["last_note"] == "applied 2, failed 0"
    heads = _log_heads(vault)
    assert [(h["kind"], h.get("applied")) for h in heads] == [("apply", 2), ("run", None)]
    assert (
        heads[1]["status"] == "ok" and heads[1]["model"] == "scripted-1" and heads[0]["trigger"] == "manual"
    )
    assert "test-key-123" not in "".join(
        p.read_text(encoding="utf-8") for p in vault.rglob("*") if p.is_file()
    )


def test_run_refuses_while_off_and_without_a_model(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAIRN_DREAM_MODEL", raising=False)
    monkeypatch.delenv("CAIRN_DREAM_BASE_URL", raising=False)
    with pytest.raises(DreamOff):
        memory.dream_run()
    memory.dream_switch(True)
    with pytest.raises(InvalidInput, match="no model"):
        memory.dream_run()


def test_the_model_cannot_apply_while_the_switch_is_off(memory: Memory, vault: Path) -> None:
    obs = memory.observe("x", durable=True)
    steps = [
        lambda m: tool_call(
            "dream_apply",
            {
                "decisions": [{"kind": "drop_observation", "observation": obs["id"], "reason": "r"}],
                "summary": "s",
            },
        ),
        say("done"),
    ]
    with serve(ScriptedModel([steps[0], lambda m: steps[1]])) as model:
        memory.dream_switch(True, model="m", base_url=model.url)

        def turned_off(name: str, args: dict) -> dict:  # a person turns the dream off mid-run
            memory.dream_switch(False)
            return memory.dream_apply(args["decisions"], "s")

        memory.dream_run(call_tool=turned_off)
        told = json.loads(model.requests[1]["messages"][-1]["content"])
    assert told["error"].startswith("dream_off")
    assert (vault / "user" / "inbox" / f"{obs['id']}.md").exists()


def test_endpoint_errors_are_recorded(memory: Memory, vault: Path) -> None:
    with serve(ScriptedModel([], status=500)) as model:
        memory.dream_switch(True, model="m", base_url=model.url)
        with pytest.raises(DreamRunError, match="HTTP 500"):
            memory.dream_run()
    status = memory.dream_status()
    assert status["last_status"] == "error" and "HTTP 500" in status["last_note"]
    assert _log_heads(vault)[-1] == _log_heads(vault)[-1] | {"kind": "run", "status": "error"}


def test_turns_are_bounded(memory: Memory) -> None:
    forever = [lambda m: tool_call("dream_load", {})] * 20
    with serve(ScriptedModel(forever)) as model:
        memory.dream_switch(True, model="m", base_url=model.url)
        with pytest.raises(DreamRunError, match="within 12 turns"):
            memory.dream_run()
        assert len(model.requests) == 12


def test_key_file_must_be_private(
    memory: Memory, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_DREAM_API_KEY", raising=False)
    key = isolated_home / "dream-key"
    key.write_text("from-file\n", encoding="utf-8")
    key.chmod(0o644)
    with pytest.raises(InvalidInput, match="chmod 600"):
        dream_runner.api_key(isolated_home)
    key.chmod(0o600)
    assert dream_runner.api_key(isolated_home) == "from-file"
    with serve(ScriptedModel([lambda m: say("nothing to do")], api_key="from-file")) as model:
        memory.dream_switch(True, model="m", base_url=model.url)
        assert memory.dream_run()["status"] == "no-apply"


def test_once_a_day_across_a_restart(vault: Path, isolated_home: Path) -> None:
    tz = None
    with serve(ScriptedModel(consolidating_steps() + consolidating_steps())) as model:
        with Memory.open(vault, home=isolated_home) as mem:
            tz = mem.tz
            mem.observe("likes tea", durable=True)
            mem.dream_switch(True, model="m", base_url=model.url, daily_at="03:30")
            day = datetime(2026, 3, 1, 3, 29, tzinfo=tz)
            assert mem.dream_tick(now=day) is None  # before the time
            report = mem.dream_tick(now=day + timedelta(minutes=2))
            assert report is not None and report["status"] == "ok"
            assert mem.dream_status()["last_run_day"] == "2026-03-01"
        # A restart: a new process (here a new Memory) ticking the same day runs nothing.
        with Memory.open(vault, home=isolated_home) as mem:
            assert mem.dream_tick(now=datetime(2026, 3, 1, 23, 0, tzinfo=tz)) is None
            assert len(model.requests) == 3
            assert mem.dream_tick(now=datetime(2026, 3, 2, 3, 31, tzinfo=tz))["status"] == "ok"
            assert len(model.requests) == 6


def test_the_day_is_stamped_before_the_run(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        # The endpoint is down: the run fails, and the day is spent all the same.
        mem.dream_switch(True, model="m", base_url="http://127.0.0.1:9/v1", daily_at="00:00")
        now = datetime(2026, 3, 1, 8, 0, tzinfo=mem.tz)
        assert mem.dream_tick(now=now)["status"] == "error"
    with Memory.open(vault, home=isolated_home) as mem:
        assert mem.dream_status()["last_run_day"] == "2026-03-01"
        assert mem.dream_tick(now=now + timedelta(hours=1)) is None


def test_schedule_thread_ticks_each_allowed_scope(vault: Path, isolated_home: Path) -> None:
    with (
        serve(ScriptedModel(consolidating_steps())) as model,
        Memory.open(vault, home=isolated_home, allow_scopes=["user", "agent:bot"]) as mem,
    ):
        mem.observe("likes tea", durable=True)
        mem.dream_switch(True, model="m", base_url=model.url, daily_at="00:00")
        stop = schedule.start(mem, interval=0.05)
        deadline = time.monotonic() + 10
        try:
            while mem.dream_status()["last_status"] != "ok" and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            stop.set()
        assert mem.dream_status(scope="agent:bot")["last_run_day"] is None  # its dream is off
        assert "likes tea" in mem.projection()["text"]


@pytest.mark.anyio
async def test_a_whole_dream_through_the_mcp_client(memory: Memory) -> None:
    keep, scratch, neutral = _seed(memory)
    with serve(ScriptedModel(consolidating_steps())) as model:
        async with connect(memory) as client:
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            assert "dream" in prompts
            prompt = (await client.get_prompt("dream", {"scope": "user"})).messages[0].content.text
            assert "memory_dream_load" in prompt and "durable: true" in prompt
            off = await call_error(client, "memory_dream_apply", decisions=[], summary="s")
            assert "dream_off" in off
            memory.dream_switch(True)
            assert (await call(client, "memory_observe", content="偏好用 Vim 写代码"))["duplicate"] is True

            def through_mcp(name: str, args: dict) -> dict:
                return anyio.from_thread.run(functools.partial(call, client, f"memory_{name}", **args))

            def conversation() -> dict:
                return dream_runner.converse(
                    base_url=model.url,
                    model="scripted",
                    key=None,
                    system=prompt,
                    user="dream now",
                    call_tool=through_mcp,
                )

            outcome = await anyio.to_thread.run_sync(conversation)
            assert outcome["note"] == "applied 2, failed 0"
            projection = await client.read_resource("memory://projection")
            assert "偏好用 Vim 写代码" in projection.contents[0].text
            left = await call(client, "memory_dream_load")
            assert [o["id"] for o in left["observations"]] == [neutral["id"]]


@pytest.mark.skipif(
    not all(os.environ.get(k) for k in ("CAIRN_DREAM_BASE_URL", "CAIRN_DREAM_API_KEY", "CAIRN_DREAM_MODEL")),
    reason="no real endpoint: set CAIRN_DREAM_BASE_URL, CAIRN_DREAM_API_KEY and CAIRN_DREAM_MODEL to run it",
)
def test_a_real_endpoint(memory: Memory, vault: Path) -> None:
    memory.observe("I always want answers in Chinese and in short paragraphs", durable=True, source="chat")
    memory.observe("scratch: look up the train times", durable=False)
    memory.dream_switch(True)  # model and base_url from the environment
    report = memory.dream_run()
    assert report["status"] in ("ok", "no-apply")
    assert _log_heads(vault)[-1]["kind"] == "run"
