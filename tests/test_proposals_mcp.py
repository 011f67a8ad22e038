"""Approval mode through the MCP SDK's own client: each write tool proposes, a person approves
from the CLI, no tool can decide; a dream (through MCP, or run against the scripted model)
leaves ONE proposal that applies all its decisions, each still checked against its rev."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app
from mcp_client import call, connect
from scripted_model import ScriptedModel, consolidating_steps, serve

runner = CliRunner()


def _propose_mode(vault: Path) -> None:
    vault.mkdir(parents=True, exist_ok=True)
    (vault / "cairn.toml").write_text('write_mode = "propose"\n', encoding="utf-8")


def _approve(pid: str, code: int = 0) -> dict:
    result = runner.invoke(app, ["proposals", "approve", pid, "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _log_heads(vault: Path) -> list[dict]:
    text = (vault / "user" / "log.md").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.startswith("{")]


@pytest.mark.anyio
async def test_each_write_tool_proposes_and_a_person_approves(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    path = vault / "user" / "Tea.md"
    async with connect(memory) as client:
        added = await call(client, "memory_write", title="Tea", observations=["[preference] 绿茶"])
        assert added["status"] == "pending" and added["kind"] == "add" and not path.exists()
        assert "waits for a person" in added["message"]
        _approve(added["proposal"])
        assert "绿茶" in path.read_text(encoding="utf-8")
        permalink = memory.read("Tea").permalink

        appended = await call(
            client, "memory_append", permalink=permalink, category="preference", text="乌龙"
        )
        assert appended["kind"] == "replace" and "乌龙" not in path.read_text(encoding="utf-8")
        _approve(appended["proposal"])
        assert "乌龙" in path.read_text(encoding="utf-8")

        edited = await call(client, "memory_edit", permalink=permalink, find="绿茶", replace="红茶")
        _approve(edited["proposal"])
        assert "红茶" in path.read_text(encoding="utf-8")

        pending_search = await call(client, "memory_search", query="乌龙")
        removed = await call(client, "memory_delete", permalink=permalink, reason="不喝了")
        assert removed["kind"] == "remove" and path.exists()
        _approve(removed["proposal"])
        assert not path.exists()
        found = await call(client, "memory_search", query="红茶")
    assert [h["permalink"] for h in pending_search["hits"]] == [permalink]  # the note, not its proposals
    assert found["hits"] == []
    assert [h["decision"] for h in _log_heads(vault)] == ["approved"] * 4


@pytest.mark.anyio
async def test_no_tool_can_decide_a_proposal(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    async with connect(memory) as client:
        tools = (await client.list_tools()).tools
        pending = await call(client, "memory_write", title="Tea")
        names = " ".join(t.name + " " + (t.description or "") for t in tools).lower()
        for word in ("approve", "reject", "decide"):
            assert not any(word in t.name for t in tools)
        assert "proposal" in names  # the dream tool says its decisions may become one
        # whatever the agent sends, the proposal stays pending
        for tool in tools:
            if tool.name.startswith("memory_dream") or tool.name in ("memory_write", "memory_observe"):
                continue
            await client.call_tool(
                tool.name, {"permalink": pending["proposal"], "query": pending["proposal"]}
            )
    assert memory.proposal(pending["proposal"])["status"] == "pending"


def _seed_dream(memory: Memory) -> tuple[dict, dict, str]:
    memory.dream_switch(True)
    keep = memory.observe("偏好用 Vim 写代码", durable=True)
    scratch = memory.observe("今天中午吃了面", durable=False)
    memory.dream_apply(
        [{"kind": "update_section", "section": "tools", "content": "- uses Linux"}], "seed a section"
    )
    rev = next(s["rev"] for s in memory.dream_load()["sections"] if s["name"] == "tools")
    return keep, scratch, rev


@pytest.mark.anyio
async def test_a_dream_through_mcp_is_one_proposal_applied_whole(memory: Memory, vault: Path) -> None:
    keep, scratch, rev = _seed_dream(memory)
    _propose_mode(vault)
    decisions = [
        {"kind": "promote_observation", "observation": keep["id"], "section": "tools", "rev": rev},
        {"kind": "drop_observation", "observation": scratch["id"], "reason": "scratch"},
        {"kind": "upsert_entity", "title": "Vim", "observations": ["[tool] the user's editor"]},
    ]
    async with connect(memory) as client:
        answer = await call(client, "memory_dream_apply", decisions=decisions, summary="nightly")
    assert answer["status"] == "pending" and answer["kind"] == "dream"
    assert [r["status"] for r in answer["results"]] == ["proposed"] * 3
    assert "+- 偏好用 Vim 写代码" in answer["diff"]
    assert len(memory.proposals()) == 1
    tools = vault / "user" / "sections" / "tools.md"
    assert "Vim" not in tools.read_text(encoding="utf-8")
    assert len(memory.dream_load()["observations"]) == 2  # nothing archived yet
    approved = _approve(answer["proposal"])
    assert approved["outcome"]["applied"] == 3 and approved["outcome"]["failed"] == 0
    assert "偏好用 Vim 写代码" in tools.read_text(encoding="utf-8")
    assert memory.dream_load()["observations"] == []
    assert memory.read("Vim").observations
    heads = _log_heads(vault)
    assert [h["kind"] for h in heads[-2:]] == ["apply", "proposal"]
    assert heads[-2]["trigger"] == f"proposal {answer['proposal']}" and heads[-1]["decision"] == "approved"


def test_a_dream_proposal_approved_after_a_hand_edit_fails_only_that_decision(
    memory: Memory, vault: Path
) -> None:
    keep, scratch, rev = _seed_dream(memory)
    _propose_mode(vault)
    answer = memory.dream_apply(
        [
            {"kind": "promote_observation", "observation": keep["id"], "section": "tools", "rev": rev},
            {"kind": "drop_observation", "observation": scratch["id"], "reason": "scratch"},
        ],
        "nightly",
        agent=True,
    )
    tools = vault / "user" / "sections" / "tools.md"
    hand = tools.read_text(encoding="utf-8") + "- a person's line\n"
    tools.write_text(hand, encoding="utf-8")
    approved = memory.approve(answer["proposal"])
    results = approved["outcome"]["results"]
    assert approved["status"] == "approved"
    assert [(r["status"], r["reason"]) for r in results] == [("failed", "rev-conflict"), ("applied", None)]
    assert tools.read_text(encoding="utf-8") == hand
    assert [o["id"] for o in memory.dream_load()["observations"]] == [keep["id"]]


def test_a_dream_proposal_can_be_rejected_whole(memory: Memory, vault: Path) -> None:
    keep, scratch, rev = _seed_dream(memory)
    _propose_mode(vault)
    answer = memory.dream_apply(
        [{"kind": "drop_observation", "observation": scratch["id"], "reason": "scratch"}], "x", agent=True
    )
    assert memory.reject(answer["proposal"], "keep it")["status"] == "rejected"
    assert len(memory.dream_load()["observations"]) == 2
    # a person's own apply (no agent) is direct in any mode
    direct = memory.dream_apply(
        [{"kind": "drop_observation", "observation": scratch["id"], "reason": "scratch"}], "by hand"
    )
    assert direct["applied"] == 1


def test_a_dream_run_in_approval_mode_leaves_one_proposal(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_DREAM_API_KEY", "test-key-123")
    memory.observe("偏好用 Vim 写代码", durable=True)
    memory.observe("今天中午吃了面", durable=False)
    _propose_mode(vault)
    with serve(ScriptedModel(consolidating_steps(), api_key="test-key-123")) as model:
        memory.dream_switch(True, model="scripted-1", base_url=model.url)
        report = memory.dream_run()
    assert report["status"] == "ok" and report["note"] == "applied 0, failed 0"
    assert "waits for a person" in json.dumps(model.requests[-1]["messages"][-1], ensure_ascii=False)
    pending = memory.proposals(status="pending")
    assert len(pending) == 1 and pending[0]["kind"] == "dream"
    assert memory.projection()["text"].count("Vim") == 0
    assert memory.approve(pending[0]["id"])["outcome"]["applied"] == 2
    assert "偏好用 Vim 写代码" in memory.projection()["text"]
