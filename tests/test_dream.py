"""dream_load / dream_apply: every decision kind, every rev-conflict path, the switch, log.md and index.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app
from cairn.governance import files
from cairn.governance.dream_config import DreamOff
from cairn.vault import content_hash


@pytest.fixture
def on(memory: Memory) -> Memory:
    memory.dream_switch(True)
    return memory


def _log_heads(vault: Path) -> list[dict]:
    text = (vault / "user" / "log.md").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.startswith("{")]


def _section_file(vault: Path, name: str) -> Path:
    return vault / "user" / "sections" / f"{name}.md"


def test_load_shapes(on: Memory, vault: Path) -> None:
    obs = on.observe("likes green tea", tags=["drinks"], durable=True, source="chat")
    on.dream_apply(
        [{"kind": "update_section", "section": "prefs", "content": "- tea", "title": "Prefs", "order": 1}]
    )
    on.write("Alice", folder="people", observations=["[role] my manager"], relations=["works_at [[Acme]]"])
    state = on.dream_load()
    assert state["scope"] == "user"
    [section] = state["sections"]
    assert section == {
        "name": "prefs",
        "title": "Prefs",
        "order": 1,
        "content": "- tea",
        "rev": content_hash(_section_file(vault, "prefs").read_bytes()),
        "path": "user/sections/prefs.md",
    }
    [entity] = state["entities"]
    assert entity["title"] == "Alice" and entity["observations"] == ["[role] my manager"]
    assert entity["relations"] == ["works_at [[Acme]]"]
    assert entity["rev"] == content_hash((vault / "user" / "people" / "Alice.md").read_bytes())
    [o] = state["observations"]
    assert {k: o[k] for k in ("id", "content", "tags", "durable", "source")} == {
        "id": obs["id"],
        "content": "likes green tea",
        "tags": ["drinks"],
        "durable": True,
        "source": "chat",
    }
    assert o["rev"].startswith("sha256:") and o["created"]


def test_the_switch_is_off_by_default_and_apply_says_how_to_turn_it_on(memory: Memory, vault: Path) -> None:
    obs = memory.observe("a fact")
    assert memory.dream_status()["enabled"] is False
    with pytest.raises(DreamOff, match="cairn --scope user dream on"):
        memory.dream_apply([{"kind": "drop_observation", "observation": obs["id"], "reason": "x"}], "s")
    assert not (vault / "user" / "log.md").exists()
    assert (vault / "user" / "inbox" / f"{obs['id']}.md").exists()
    # Observe, read, search and load still work while it is off.
    assert memory.dream_load()["observations"][0]["id"] == obs["id"]
    assert memory.search("fact")[0].permalink == obs["id"]
    assert (
        json.loads(
            (vault / "user" / "dream.json").read_text() if (vault / "user" / "dream.json").exists() else "{}"
        )
        == {}
    )
    memory.dream_switch(True)
    assert json.loads((vault / "user" / "dream.json").read_text())["enabled"] is True
    memory.dream_switch(False)
    with pytest.raises(DreamOff):
        memory.dream_apply([], "s")


def test_promote_into_a_new_section_with_an_entity_then_archive(on: Memory, vault: Path) -> None:
    obs = on.observe("用户对花生过敏", durable=True)
    report = on.dream_apply(
        [
            {
                "kind": "promote_observation",
                "observation": obs["id"],
                "section": "健康",
                "text": "对花生过敏",
                "entity": {"title": "过敏", "observations": ["[allergy] 花生"]},
            }
        ],
        "promoted an allergy",
    )
    assert report["results"][0]["status"] == "applied", report
    assert "- 对花生过敏" in _section_file(vault, "健康").read_text(encoding="utf-8")
    assert "- [allergy] 花生" in (vault / "user" / "entities" / "过敏.md").read_text(encoding="utf-8")
    assert not (vault / "user" / "inbox" / f"{obs['id']}.md").exists()
    archived = (vault / "user" / "inbox" / "archived" / f"{obs['id']}.md").read_text(encoding="utf-8")
    assert "status: archived" in archived and "outcome: promoted" in archived
    assert on.dream_load()["observations"] == []
    # Archived drafts leave search; the promoted fact is found in its section.
    assert {h.path for h in on.search("花生")} == {"user/sections/健康.md", "user/entities/过敏.md"}


def test_promote_into_an_existing_section_and_twice_in_one_apply(on: Memory, vault: Path) -> None:
    on.dream_apply([{"kind": "update_section", "section": "prefs", "content": "- tea"}])
    a, b = on.observe("likes jazz", durable=True), on.observe("likes hiking", durable=True)
    rev = on.dream_load()["sections"][0]["rev"]
    report = on.dream_apply(
        [
            {
                "kind": "promote_observation",
                "observation": a["id"],
                "section": "prefs",
                "rev": rev,
                "text": "jazz",
            },
            {
                "kind": "promote_observation",
                "observation": b["id"],
                "section": "prefs",
                "rev": rev,
                "text": "hiking",
            },
        ]
    )
    assert [r["status"] for r in report["results"]] == ["applied", "applied"]
    assert on.projection()["text"].endswith("- tea\n- jazz\n- hiking\n")


def test_drop_update_upsert_and_log_only(on: Memory, vault: Path) -> None:
    obs = on.observe("scratch: call back", durable=False)
    on.write("Bob", folder="people", observations=["[role] neighbour"])
    bob = on.dream_load()["entities"][0]
    # A person adds a line to Bob by hand before the dream: the rev is taken after it.
    report = on.dream_apply(
        [
            {"kind": "drop_observation", "observation": obs["id"], "reason": "a scratch note"},
            {
                "kind": "update_section",
                "section": "people",
                "content": "- Bob lives next door",
                "title": "People",
                "order": 5,
            },
            {
                "kind": "upsert_entity",
                "title": "Bob",
                "observations": ["[role] neighbour", "[hobby] chess"],
                "relations": ["knows [[Carol]]"],
                "rev": bob["rev"],
            },
            {"kind": "upsert_entity", "title": "Carol", "observations": ["[role] Bob's friend"]},
            {"kind": "log_only", "note": "nothing else to do"},
        ],
        "a mixed dream",
    )
    assert [r["status"] for r in report["results"]] == ["applied"] * 5, report
    archived = (vault / "user" / "inbox" / "archived" / f"{obs['id']}.md").read_text(encoding="utf-8")
    assert "outcome: dropped" in archived and "reason: a scratch note" in archived
    people = _section_file(vault, "people").read_text(encoding="utf-8")
    assert "order: 5" in people and "title: People" in people and "- Bob lives next door" in people
    bob_text = (vault / "user" / "people" / "Bob.md").read_text(encoding="utf-8")
    assert (
        bob_text.count("[role] neighbour") == 1
        and "- [hobby] chess" in bob_text
        and "knows [[Carol]]" in bob_text
    )
    assert "- [role] Bob's friend" in (vault / "user" / "entities" / "Carol.md").read_text(encoding="utf-8")
    assert on.read("Carol").permalink.startswith("carol-")
    heads = _log_heads(vault)
    assert heads[-1]["applied"] == 5 and heads[-1]["failed"] == 0 and heads[-1]["kind"] == "apply"
    log = (vault / "user" / "log.md").read_text(encoding="utf-8")
    assert "a mixed dream" in log and "nothing else to do" in log
    index = (vault / "user" / "index.md").read_text(encoding="utf-8")
    assert "[[People]]" in index and "[[Bob]]" in index and "[[Carol]]" in index


def test_update_section_rewrites_the_whole_content_and_keeps_front_matter(on: Memory, vault: Path) -> None:
    path = _section_file(vault, "prefs")
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\ntitle: Prefs\norder: 1\nowner: me  # kept\n---\n\n# Prefs\n\n- old fact\n", encoding="utf-8"
    )
    rev = on.dream_load()["sections"][0]["rev"]
    report = on.dream_apply(
        [{"kind": "update_section", "section": "prefs", "content": "- new fact", "rev": rev}]
    )
    assert report["results"][0]["status"] == "applied"
    text = path.read_text(encoding="utf-8")
    assert "owner: me  # kept" in text and "old fact" not in text and text.endswith("# Prefs\n\n- new fact\n")


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        ({"kind": "merge_everything"}, "unknown kind 'merge_everything'"),
        ({"observation": "x"}, "unknown kind None"),
        ("not an object", "must be a JSON object"),
        ({"kind": "drop_observation", "observation": "obs-1"}, "missing field 'reason'"),
        (
            {"kind": "drop_observation", "observation": "obs-none", "reason": "r"},
            "unknown observation id 'obs-none'",
        ),
        ({"kind": "promote_observation", "observation": "../x", "section": "s"}, "unknown observation id"),
        ({"kind": "update_section", "section": "../etc", "content": "x"}, "plain file name"),
        ({"kind": "update_section", "section": "s", "content": 3}, "'content' must be text"),
        ({"kind": "update_section", "section": "s", "content": "x", "rev": "abc"}, "'rev' must be the rev"),
        (
            {"kind": "upsert_entity", "title": "T", "observations": ["no category"]},
            "starts with a [category]",
        ),
        ({"kind": "upsert_entity", "title": "T", "folder": "inbox"}, "bad target folder"),
        ({"kind": "log_only", "note": "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"}, "refused"),
    ],
)
def test_invalid_decisions_fail_alone(on: Memory, vault: Path, decision: object, reason: str) -> None:
    report = on.dream_apply([decision, {"kind": "log_only", "note": "still applied"}], "s")
    first, second = report["results"]
    assert first["status"] == "failed" and reason in first["reason"], first
    assert second["status"] == "applied"


def test_sensitive_and_non_entity_targets_are_refused(on: Memory, vault: Path) -> None:
    path = _section_file(vault, "health")
    path.parent.mkdir(parents=True)
    path.write_text("---\ntitle: Health\nsensitivity: sensitive\n---\n\n- private\n", encoding="utf-8")
    assert on.dream_load()["sections"] == []
    report = on.dream_apply(
        [
            {
                "kind": "update_section",
                "section": "health",
                "content": "x",
                "rev": content_hash(path.read_bytes()),
            },
            {"kind": "upsert_entity", "title": "Health", "observations": ["[note] y"]},
        ]
    )
    assert "sensitive" in report["results"][0]["reason"]
    assert "bad target" in report["results"][1]["reason"]
    assert "private" in path.read_text(encoding="utf-8")


# -- rev-conflict and compare-and-swap --------------------------------------------------------


def test_a_person_edits_a_section_after_the_load_and_the_edit_survives(on: Memory, vault: Path) -> None:
    on.dream_apply([{"kind": "update_section", "section": "prefs", "content": "- tea"}])
    obs = on.observe("likes jazz", durable=True)
    state = on.dream_load()
    rev = state["sections"][0]["rev"]
    path = _section_file(vault, "prefs")
    path.write_text(path.read_text(encoding="utf-8") + "- written by hand\n", encoding="utf-8")
    report = on.dream_apply(
        [
            {"kind": "update_section", "section": "prefs", "content": "- coffee", "rev": rev},
            {"kind": "promote_observation", "observation": obs["id"], "section": "prefs", "rev": rev},
            {"kind": "log_only", "note": "others still apply"},
        ]
    )
    assert [(r["status"], r["reason"]) for r in report["results"]] == [
        ("failed", "rev-conflict"),
        ("failed", "rev-conflict"),
        ("applied", None),
    ]
    assert report["results"][0]["target"] == "user/sections/prefs.md"
    text = path.read_text(encoding="utf-8")
    assert "- written by hand" in text and "- tea" in text and "coffee" not in text and "jazz" not in text
    assert (vault / "user" / "inbox" / f"{obs['id']}.md").exists()  # still open for the next dream
    assert _log_heads(vault)[-1]["failed"] == 2


def test_new_section_created_by_a_person_meanwhile_conflicts(on: Memory, vault: Path) -> None:
    path = _section_file(vault, "work")
    path.parent.mkdir(parents=True)
    on.dream_load()  # no such section at the load
    path.write_text("# work\n\n- by hand\n", encoding="utf-8")
    report = on.dream_apply([{"kind": "update_section", "section": "work", "content": "- by the dream"}])
    assert report["results"][0]["reason"] == "rev-conflict"
    assert path.read_text(encoding="utf-8") == "# work\n\n- by hand\n"


def test_section_deleted_since_the_load_conflicts(on: Memory, vault: Path) -> None:
    on.dream_apply([{"kind": "update_section", "section": "old", "content": "- x"}])
    rev = on.dream_load()["sections"][0]["rev"]
    _section_file(vault, "old").unlink()
    report = on.dream_apply([{"kind": "update_section", "section": "old", "content": "- y", "rev": rev}])
    assert report["results"][0]["reason"] == "rev-conflict"
    assert not _section_file(vault, "old").exists()


def test_entity_conflicts(on: Memory, vault: Path) -> None:
    on.write("Dana", observations=["[role] friend"])
    rev = on.dream_load()["entities"][0]["rev"]
    on.append("Dana", "[city] Lyon")  # a change after the load, through Cairn
    stale = on.dream_apply(
        [{"kind": "upsert_entity", "title": "Dana", "observations": ["[note] y"], "rev": rev}]
    )
    no_rev = on.dream_apply([{"kind": "upsert_entity", "title": "Dana", "observations": ["[note] y"]}])
    on.write("Eve", observations=["[role] friend"])
    eve_rev = next(e["rev"] for e in on.dream_load()["entities"] if e["title"] == "Eve")
    on.delete("Eve")
    gone = on.dream_apply(
        [{"kind": "upsert_entity", "title": "Eve", "observations": ["[note] y"], "rev": eve_rev}]
    )
    for report in (stale, no_rev, gone):
        assert report["results"][0]["reason"] == "rev-conflict", report
    assert "[note] y" not in (vault / "user" / "Dana.md").read_text(encoding="utf-8")
    assert not (vault / "user" / "entities" / "Eve.md").exists()


def test_observation_handled_twice_fails_the_second_time(on: Memory) -> None:
    obs = on.observe("a fact", durable=True)
    drop = {"kind": "drop_observation", "observation": obs["id"], "reason": "dup"}
    first, second = on.dream_apply([drop, drop])["results"]
    assert first["status"] == "applied" and "unknown observation id" in second["reason"]


def test_commit_rechecks_right_before_each_write(
    on: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = vault / "user" / "sections" / "s.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"# s\n\n- one\n")
    change = files.Change("user/sections/s.md", content_hash(path.read_bytes()), b"# s\n\n- dream\n")
    path.write_bytes(b"# s\n\n- one\n- person\n")  # the person's edit lands after the plan
    with pytest.raises(files.RevConflict):
        files.commit(vault, [change])
    # ... and even after the first check (an editor takes no lock): the write re-checks.
    monkeypatch.setattr(files, "check", lambda vault, changes: None)
    with pytest.raises(files.RevConflict):
        files.commit(vault, [change])
    assert path.read_bytes() == b"# s\n\n- one\n- person\n"
    create = files.Change("user/sections/s.md", None, b"new")
    with pytest.raises(files.RevConflict):
        files.commit(vault, [create])  # a create never overwrites
    assert path.read_bytes() == b"# s\n\n- one\n- person\n"


def test_log_is_append_only_and_reads_back(on: Memory, vault: Path) -> None:
    on.dream_apply([{"kind": "log_only", "note": "first"}], "one")
    before = (vault / "user" / "log.md").read_bytes()
    on.dream_apply([{"kind": "log_only", "note": "second"}, {"kind": "bogus"}], "two")
    after = (vault / "user" / "log.md").read_bytes()
    assert after.startswith(before)
    heads = _log_heads(vault)
    assert [(h["applied"], h["failed"]) for h in heads] == [(1, 0), (1, 1)]
    assert on.dream_status()["log"][-1]["failed"] == 1


def test_cli_dream_commands(memory: Memory, vault: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    obs = memory.observe("likes tea", durable=True)
    decisions = tmp_path / "d.json"
    decisions.write_text(
        json.dumps(
            {
                "summary": "cli dream",
                "decisions": [{"kind": "promote_observation", "observation": obs["id"], "section": "prefs"}],
            }
        ),
        encoding="utf-8",
    )
    off = runner.invoke(app, ["dream", "apply", str(decisions), "--json"])
    assert off.exit_code == DreamOff.exit_code and "dream on" in json.loads(off.stdout)["error"]["message"]
    assert runner.invoke(app, ["dream", "on", "--daily-at", "03:30"]).exit_code == 0
    status = json.loads(runner.invoke(app, ["dream", "status", "--json"]).stdout)
    assert status["enabled"] is True and status["daily_at"] == "03:30" and status["open"] == 1
    loaded = json.loads(runner.invoke(app, ["dream", "load"]).stdout)
    assert loaded["observations"][0]["id"] == obs["id"]
    applied = runner.invoke(app, ["dream", "apply", str(decisions), "--json"])
    report = json.loads(applied.stdout)
    assert report["results"] == [
        {
            "index": 0,
            "kind": "promote_observation",
            "status": "applied",
            "reason": None,
            "target": f"{obs['id']} -> user/sections/prefs.md",
            "changed": [
                "user/sections/prefs.md",
                f"user/inbox/archived/{obs['id']}.md",
                f"user/inbox/{obs['id']}.md",
            ],
        }
    ]
    assert report["log"] == "user/log.md"
    bad = runner.invoke(app, ["dream", "on", "--daily-at", "7pm"])
    assert bad.exit_code == 2 and "HH:MM" in bad.output
    assert runner.invoke(app, ["dream", "off"]).exit_code == 0
    assert json.loads((vault / "user" / "dream.json").read_text())["enabled"] is False
