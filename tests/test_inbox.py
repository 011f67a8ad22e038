"""Observations: one create-only file each, idempotent, bounded, guarded, searchable as drafts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app
from cairn.errors import InvalidInput, SecretRefused
from cairn.governance.inbox import InboxFull


def _front(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---")[1]


def test_observe_writes_one_file_with_the_front_matter(memory: Memory, vault: Path) -> None:
    result = memory.observe("喜欢坐前排听课", tags=["#课堂", "习惯"], durable=True, source="chat")
    assert result["duplicate"] is False and result["open"] == 1 and result["capacity"] == 200
    files = list((vault / "user" / "inbox").glob("obs-*.md"))
    assert [f.stem for f in files] == [result["id"]]
    import re

    assert re.fullmatch(r"obs-\d{14}-[0-9a-f]{6}", result["id"])
    front = _front(files[0])
    for line in (
        "status: open",
        "durable: true",
        "source: chat",
        "tags: [课堂, 习惯]",
        f"id: {result['id']}",
    ):
        assert line in front
    assert "created: 20" in front
    assert files[0].read_text(encoding="utf-8").rstrip().endswith("喜欢坐前排听课")


def test_durable_false_and_neutral(memory: Memory, vault: Path) -> None:
    scratch = memory.observe("temp note", durable=False)
    neutral = memory.observe("neutral note")
    assert "durable: false" in _front(vault / scratch["path"])
    assert "durable" not in _front(vault / neutral["path"])


def test_identical_open_content_returns_the_existing_id(memory: Memory, vault: Path) -> None:
    first = memory.observe("Prefers tea over coffee")
    again = memory.observe("  Prefers tea over coffee\n")
    assert again == first | {"duplicate": True}
    assert len(list((vault / "user" / "inbox").glob("*.md"))) == 1


def test_too_long_is_refused_never_cut(memory: Memory, vault: Path) -> None:
    memory.observe("x" * 2000)  # the limit itself is fine
    with pytest.raises(InvalidInput, match="2000 characters; this one has 2001"):
        memory.observe("y" * 2001)
    assert len(list((vault / "user" / "inbox").glob("*.md"))) == 1


def test_capacity_from_cairn_toml_then_a_clear_error(vault: Path, isolated_home: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "cairn.toml").write_text("observations_max = 3\n", encoding="utf-8")
    with Memory.open(vault, home=isolated_home) as mem:
        for i in range(3):
            assert mem.observe(f"fact {i}")["capacity"] == 3
        with pytest.raises(InboxFull, match="run a dream"):
            mem.observe("one too many")
        assert mem.observe("fact 1")["duplicate"] is True  # a duplicate is still answered
    assert len(list((vault / "user" / "inbox").glob("*.md"))) == 3


def test_secrets_are_refused(memory: Memory, vault: Path) -> None:
    with pytest.raises(SecretRefused):
        memory.observe("my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")
    with pytest.raises(SecretRefused):
        memory.observe("fine text", tags=["ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
    assert not (vault / "user" / "inbox").exists() or not list((vault / "user" / "inbox").glob("*.md"))


def test_open_observations_are_searchable_as_drafts(memory: Memory) -> None:
    memory.write("饮食偏好", observations=["[preference] 不吃香菜"])
    obs = memory.observe("用户说他最近开始学习滑雪", tags=["运动"])
    hits = memory.search("滑雪")
    assert [(h.permalink, h.type) for h in hits] == [(obs["id"], "observation")]
    assert memory.read(obs["id"]).frontmatter["status"] == "open"


def test_generated_files_and_dream_json_do_not_become_notes(memory: Memory, vault: Path) -> None:
    memory.write("Kyoto trip", observations=["[plan] visit in April"])
    (vault / "user" / "index.md").write_text("# Index\n\n- [[Kyoto trip]]\n", encoding="utf-8")
    (vault / "user" / "log.md").write_text('{"at":"x"}\n## Kyoto trip dream\n', encoding="utf-8")
    (vault / "user" / "dream.json").write_text('{"enabled": false}', encoding="utf-8")
    hits = memory.search("Kyoto")
    assert [h.path for h in hits] == ["user/Kyoto trip.md"]
    assert memory.status()["notes"] == 1
    # A note of that name deeper in the scope is an ordinary note.
    (vault / "user" / "projects").mkdir()
    (vault / "user" / "projects" / "index.md").write_text("# Projects index\n\nKyoto\n", encoding="utf-8")
    assert {h.path for h in memory.search("Kyoto")} == {"user/Kyoto trip.md", "user/projects/index.md"}


def test_concurrent_threads_never_overwrite(memory: Memory, vault: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda i: memory.observe(f"parallel fact {i}")["id"], range(40)))
    assert len(set(ids)) == 40
    assert len(list((vault / "user" / "inbox").glob("*.md"))) == 40


def test_cli_observe_json_and_flags(vault: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["observe", "喜欢美式咖啡", "--tag", "饮食", "--durable", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data) >= {"id", "duplicate", "open", "capacity"} and data["open"] == 1
    assert "durable: true" in _front(vault / "user" / "inbox" / f"{data['id']}.md")
    note = runner.invoke(app, ["observe", "scratch", "--note-only", "--source", "phone", "--json"])
    front = _front(vault / "user" / "inbox" / f"{json.loads(note.stdout)['id']}.md")
    assert "durable: false" in front and "source: phone" in front
    long = runner.invoke(app, ["observe", "z" * 2001, "--json"])
    assert long.exit_code == InvalidInput.exit_code
    assert "2000" in json.loads(long.stdout)["error"]["message"]


def test_a_hand_made_inbox_file_counts_and_a_broken_one_is_skipped(memory: Memory, vault: Path) -> None:
    inbox = vault / "user" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "by-hand.md").write_text("Remember the dentist on Friday\n", encoding="utf-8")
    (inbox / "broken.md").write_text("---\n: [unclosed\n---\nx\n", encoding="utf-8")
    os.symlink("/etc/passwd", inbox / "link.md")
    state = memory.dream_load()
    assert [o["id"] for o in state["observations"]] == ["by-hand"]
    assert "user/inbox/broken.md" in state["damaged"]
    assert memory.observe("Remember the dentist on Friday")["duplicate"] is True
