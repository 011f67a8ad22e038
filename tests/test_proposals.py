"""Approval mode (issue 35 item 5): agents' writes through `cairn --as-agent` become proposals in
<scope>/proposals/, which a person approves (compare-and-swap), rejects, or lets expire; every
decision is idempotent and lands in log.md."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app
from cairn.errors import InvalidInput, SecretRefused

runner = CliRunner()


def _propose_mode(vault: Path, extra: str = "") -> None:
    vault.mkdir(parents=True, exist_ok=True)
    (vault / "cairn.toml").write_text(f'write_mode = "propose"\n{extra}', encoding="utf-8")


def _cli(*args: str, code: int = 0) -> dict | list:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == code, (args, result.output)
    return json.loads(result.stdout)


def _log_heads(vault: Path, scope_folder: str = "user") -> list[dict]:
    text = (vault / scope_folder / "log.md").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.startswith("{")]


def test_direct_mode_is_unchanged(memory: Memory, vault: Path) -> None:
    assert memory.write_mode == "direct"
    note = _cli("--as-agent", "write", "Tea", "--obs", "[preference] green tea")
    assert note["permalink"] and (vault / "user" / "Tea.md").is_file()
    _cli("--as-agent", "append", note["permalink"], "[preference] oolong")
    assert "oolong" in (vault / "user" / "Tea.md").read_text(encoding="utf-8")
    assert not (vault / "user" / "proposals").exists()
    # --as-agent never approves, whatever the mode
    refused = runner.invoke(app, ["--as-agent", "proposals", "approve", "20260101-000000-abcdef"])
    assert refused.exit_code == 19 and "only a person" in refused.output


def test_each_kind_via_the_cli_as_agent_then_approved(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    path = vault / "user" / "Tea.md"

    added = _cli("--as-agent", "write", "Tea", "--obs", "[preference] green tea")
    assert added["status"] == "pending" and added["kind"] == "add" and added["target"] == "user/Tea.md"
    assert "+- [preference] green tea" in added["diff"] and "a person" in added["message"]
    assert not path.exists()
    assert memory.search("green") == []  # a change nobody approved is not memory
    listed = _cli("proposals", "list")
    assert [(p["id"], p["status"]) for p in listed] == [(added["proposal"], "pending")]
    shown = _cli("proposals", "show", added["proposal"])
    assert shown["text"].startswith("---\ntitle: Tea") and shown["version"] is None
    approved = _cli("proposals", "approve", added["proposal"])
    assert approved["status"] == "approved" and approved["again"] is False
    assert path.read_text(encoding="utf-8") == shown["text"]  # exactly what was shown
    permalink = memory.read("Tea").permalink

    appended = _cli("--as-agent", "append", permalink, "[preference] oolong too")
    edited_before = path.read_bytes()
    assert appended["kind"] == "replace" and "+- [preference] oolong too" in appended["diff"]
    assert path.read_bytes() == edited_before
    _cli("proposals", "approve", appended["proposal"])
    assert "oolong too" in path.read_text(encoding="utf-8")

    edited = _cli("--as-agent", "edit", permalink, "--find", "green tea", "--replace", "black tea")
    assert "-- [preference] green tea" in edited["diff"] and "+- [preference] black tea" in edited["diff"]
    _cli("proposals", "approve", edited["proposal"])
    assert "black tea" in path.read_text(encoding="utf-8")

    removed = _cli("--as-agent", "delete", permalink)
    assert removed["kind"] == "remove" and path.exists()
    _cli("proposals", "approve", removed["proposal"])
    assert not path.exists() and list((vault / "user" / ".trash").glob("*.md"))
    decisions = [(h["decision"], h["proposal_kind"]) for h in _log_heads(vault)]
    assert decisions == [
        ("approved", "add"),
        ("approved", "replace"),
        ("approved", "replace"),
        ("approved", "remove"),
    ]


def test_approved_after_a_hand_edit_is_conflicted_and_writes_nothing(memory: Memory, vault: Path) -> None:
    memory.write("Tea", observations=["[preference] green tea"])
    _propose_mode(vault)
    pending = _cli("--as-agent", "append", "Tea", "[preference] oolong")
    path = vault / "user" / "Tea.md"
    hand = path.read_text(encoding="utf-8") + "\nA person's own line.\n"
    path.write_text(hand, encoding="utf-8")
    answer = _cli("proposals", "approve", pending["proposal"], code=1)
    assert answer["status"] == "conflicted" and "changed since" in answer["outcome"]["reason"]
    assert path.read_text(encoding="utf-8") == hand
    assert _log_heads(vault)[-1]["decision"] == "conflicted"
    again = _cli("proposals", "approve", pending["proposal"], code=1)
    assert again["status"] == "conflicted" and again["again"] is True


def test_add_conflicts_when_the_path_was_taken_and_remove_when_the_target_changed(
    memory: Memory, vault: Path
) -> None:
    _propose_mode(vault)
    add = memory.propose("write", "Tea", observations=["[fact] proposed"])
    memory.write("Tea", observations=["[fact] a person wrote it first"])
    assert memory.approve(add["proposal"])["status"] == "conflicted"
    assert "a person wrote it first" in (vault / "user" / "Tea.md").read_text(encoding="utf-8")

    remove = memory.propose("delete", "Tea", reason="outdated")
    memory.append("Tea", "[fact] one more line by hand")
    assert memory.approve(remove["proposal"])["status"] == "conflicted"
    assert (vault / "user" / "Tea.md").is_file()


def test_deciding_twice_gives_the_same_answer(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    pending = memory.propose("write", "Tea", observations=["[fact] once"])
    first = memory.approve(pending["proposal"])
    written = (vault / "user" / "Tea.md").read_bytes()
    second = memory.approve(pending["proposal"])
    assert (first["status"], first["again"]) == ("approved", False)
    assert (second["status"], second["again"]) == ("approved", True)
    assert second["decided"] == first["decided"]
    late_reject = _cli("proposals", "reject", pending["proposal"], "--why", "too late", code=1)
    assert late_reject["status"] == "approved"
    assert (vault / "user" / "Tea.md").read_bytes() == written
    assert [h["decision"] for h in _log_heads(vault)] == ["approved"]


def test_reject_with_a_reason(memory: Memory, vault: Path) -> None:
    memory.write("Tea", observations=["[preference] green tea"])
    _propose_mode(vault)
    before = (vault / "user" / "Tea.md").read_bytes()
    pending = _cli("--as-agent", "delete", "Tea")
    rejected = _cli("proposals", "reject", pending["proposal"], "--why", "我还喝绿茶")
    assert rejected["status"] == "rejected" and rejected["why"] == "我还喝绿茶"
    assert (vault / "user" / "Tea.md").read_bytes() == before
    assert _cli("proposals", "approve", pending["proposal"], code=1)["status"] == "rejected"
    head = _log_heads(vault)[-1]
    assert head["decision"] == "rejected" and head["proposal"] == pending["proposal"]
    assert "why: 我还喝绿茶" in (vault / "user" / "log.md").read_text(encoding="utf-8")
    assert _cli("proposals", "list", "--status", "rejected")[0]["id"] == pending["proposal"]


def test_expiry_from_proposal_ttl(memory: Memory, vault: Path) -> None:
    _propose_mode(vault, 'proposal_ttl = "2h"\n')
    pending = memory.propose("write", "Tea", observations=["[fact] short-lived"])
    created = datetime.fromisoformat(memory.proposal(pending["proposal"])["created"])
    assert datetime.fromisoformat(pending["expires"]) - created == timedelta(hours=2)
    later = created + timedelta(hours=2, seconds=1)
    assert memory.proposals(now=created + timedelta(minutes=119))[0]["status"] == "pending"
    assert memory.proposals(now=later)[0]["status"] == "expired"
    answer = memory.approve(pending["proposal"], now=later)
    assert answer["status"] == "expired" and not (vault / "user" / "Tea.md").exists()
    assert memory.approve(pending["proposal"])["status"] == "expired"  # for good, even "now"
    assert _log_heads(vault)[-1]["decision"] == "expired"


@pytest.mark.parametrize(("value", "minutes"), [("15", None), ("30", 30), ('"45m"', 45), ('"1d"', 1440)])
def test_proposal_ttl_forms(memory: Memory, vault: Path, value: str, minutes: int | None) -> None:
    _propose_mode(vault, f"proposal_ttl = {value}\n")
    if minutes is None:  # a quoted number with no unit is read as minutes too; a bare 15 is the default
        (vault / "cairn.toml").write_text('write_mode = "propose"\n', encoding="utf-8")
        minutes = 15
    pending = memory.propose("write", f"Note {minutes}")
    created = datetime.fromisoformat(memory.proposal(pending["proposal"])["created"])
    assert datetime.fromisoformat(pending["expires"]) - created == timedelta(minutes=minutes)


def test_bad_settings_are_one_line_errors(memory: Memory, vault: Path) -> None:
    _propose_mode(vault, "proposal_ttl = -3\n")
    with pytest.raises(InvalidInput, match="proposal_ttl"):
        memory.propose("write", "Tea")
    (vault / "cairn.toml").write_text('write_mode = "maybe"\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="write_mode"):
        memory.write_mode  # noqa: B018
    with pytest.raises(InvalidInput, match="not a proposal id"):
        memory.approve("../../etc/passwd")


def test_the_secret_guard_applies_when_proposing(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    with pytest.raises(SecretRefused):
        memory.propose("write", "Keys", observations=[f"[fact] the key is {key}"])
    refused = runner.invoke(app, ["--as-agent", "write", "Keys", "--obs", f"[fact] key {key}"])
    assert refused.exit_code == SecretRefused.exit_code
    assert not (vault / "user" / "proposals").exists() or not list((vault / "user" / "proposals").iterdir())


def test_an_agent_cannot_decide_from_the_cli(memory: Memory, vault: Path) -> None:
    _propose_mode(vault)
    pending = _cli("--as-agent", "write", "Tea")
    for args in (["approve", pending["proposal"]], ["reject", pending["proposal"]]):
        refused = runner.invoke(app, ["--as-agent", "proposals", *args, "--json"])
        assert refused.exit_code == 19 and json.loads(refused.stdout)["error"]["code"] == "approval_refused"
    assert memory.proposal(pending["proposal"])["status"] == "pending"


def test_import_in_propose_mode_makes_one_proposal_per_note(
    memory: Memory, vault: Path, tmp_path: Path
) -> None:
    source = tmp_path / "obsidian"
    source.mkdir()
    (source / "Alpha.md").write_text("# Alpha\n\n- [fact] first\n", encoding="utf-8")
    (source / "Beta.md").write_text("# Beta\n\n- [fact] second\n", encoding="utf-8")
    _propose_mode(vault)
    report = _cli("import", str(source), "--from", "obsidian")
    proposed = [n for n in report["notes"] if n["status"] == "proposed"]
    assert len(proposed) == 2 and not list((vault / "user").glob("*.md"))
    for item in proposed:
        assert memory.approve(item["proposal"])["status"] == "approved"
    assert {p.name for p in (vault / "user").glob("*.md")} >= {"Alpha.md", "Beta.md"}


APPROVER = textwrap.dedent(
    """
    import json, sys
    from cairn import Memory
    vault, home, pid = sys.argv[1:4]
    with Memory.open(vault, home=home, origin=sys.argv[4]) as mem:
        print(json.dumps(mem.approve(pid)))
    """
)


def test_two_processes_approving_at_once_commit_once(
    memory: Memory, vault: Path, isolated_home: Path
) -> None:
    memory.write("Tea", observations=["[fact] base"])
    _propose_mode(vault)
    pending = memory.propose("append", "Tea", "[fact] added once")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPROVER, str(vault), str(isolated_home), pending["proposal"], f"p{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        answers.append(json.loads(out))
    assert sorted(a["again"] for a in answers) == [False, True, True]
    assert {a["status"] for a in answers} == {"approved"}
    assert len({a["decided_by"] for a in answers}) == 1
    assert (vault / "user" / "Tea.md").read_text(encoding="utf-8").count("added once") == 1
    assert [h["decision"] for h in _log_heads(vault)] == ["approved"]
