"""The monthly journal: Memory.journal, `cairn journal`, MCP memory_journal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory, journal
from cairn.cli import app
from cairn.errors import InvalidInput, NotFound, SecretRefused
from mcp_client import call, connect


def _clock(monkeypatch: pytest.MonkeyPatch, *moments: str) -> None:
    """Entries stamped with these times, one after another."""
    times = iter(moments)
    monkeypatch.setattr(journal, "now", lambda tz: next(times))


def test_entries_across_two_months_go_to_two_files(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _clock(
        monkeypatch,
        "2026-11-04T10:22:00+08:00",
        "2026-11-30T23:59:59+08:00",
        "2026-12-01T00:00:01+08:00",
    )
    memory.journal("讨论了数据结构大作业\n决定用 AVL 树")
    memory.journal("second November entry")
    december = memory.journal("first of December")
    november = memory.journal_month("2026-11")
    assert november.path == "user/journal/2026-11.md" and december.path == "user/journal/2026-12.md"
    assert november.title == "Journal 2026-11" and november.type == "journal"
    assert november.frontmatter["created"] == "2026-11-04T10:22:00+08:00"
    assert "modified" not in november.frontmatter  # never rewritten: appends stay pure line additions
    got = [(e.time, e.text, e.origin) for e in journal.entries(november)]
    assert got == [
        ("2026-11-04T10:22:00+08:00", "讨论了数据结构大作业 决定用 AVL 树", "test"),
        ("2026-11-30T23:59:59+08:00", "second November entry", "test"),
    ]
    assert [e.text for e in journal.entries(december)] == ["first of December"]
    assert (
        "- [entry] 讨论了数据结构大作业 决定用 AVL 树 (2026-11-04T10:22:00+08:00 · test)\n" in november.text
    )
    with pytest.raises(NotFound):
        memory.journal_month("2027-01")
    with pytest.raises(InvalidInput, match="YYYY-MM"):
        memory.journal_month("2026-13")


def test_an_append_only_adds_a_line_at_the_end(memory: Memory, vault: Path) -> None:
    memory.journal("one")
    before = next((vault / "user" / "journal").glob("*.md")).read_text(encoding="utf-8")
    memory.journal("two")
    after = next((vault / "user" / "journal").glob("*.md")).read_text(encoding="utf-8")
    assert after.startswith(before)
    added = after[len(before) :]
    assert added.count("\n") == 1 and added.startswith("- [entry] two (")


def test_empty_and_secret_entries_are_refused(memory: Memory, vault: Path) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        memory.journal("  \n ")
    with pytest.raises(SecretRefused):
        memory.journal("deploy key: sk-proj-Abc123Def456Ghi789Jkl012Mno345")
    assert not (vault / "user" / "journal").exists()


def test_sensitive_entries_never_reach_a_snapshot_or_search(memory: Memory) -> None:
    memory.journal("talked about the orchard harvest")
    memory.journal("orchard visit with the doctor about my diagnosis", sensitive=True)
    snap = memory.snapshot("orchard")
    assert "orchard harvest" in snap.text
    assert "diagnosis" not in snap.text and "doctor" not in snap.text
    hits = memory.search("diagnosis")
    assert hits == []
    assert memory.search("diagnosis", include_sensitive=True)  # it is there, only kept back
    note = memory.journal_month(memory.list(type="journal")[0].path.split("/")[-1][:7])
    assert [e.text for e in journal.entries(note)] == ["talked about the orchard harvest"]
    assert [e.sensitive for e in journal.entries(note, include_sensitive=True)] == [False, True]


_APPENDER = """
import sys
from cairn import Memory
with Memory.open(sys.argv[1], home=sys.argv[2], origin=sys.argv[3], watch=False) as mem:
    for i in range(int(sys.argv[4])):
        mem.journal(f"{sys.argv[3]} entry {i}")
"""


def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    vault, home = tmp_path / "vault", tmp_path / "state"
    Memory.open(vault, home=home).close()
    count = 25
    procs = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, str(vault), str(home), name, str(count)])
        for name in ("laptop", "phone")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with Memory.open(vault, home=home, watch=False) as mem:
        notes = mem.list(type="journal")
        assert len(notes) == 1
        texts = [e.text for e in journal.entries(mem.read(notes[0].permalink))]
    expected = {f"{name} entry {i}" for name in ("laptop", "phone") for i in range(count)}
    assert len(texts) == 2 * count and set(texts) == expected
    for name in ("laptop", "phone"):  # each process's entries in the order it wrote them
        assert [t for t in texts if t.startswith(name)] == [f"{name} entry {i}" for i in range(count)]


def test_cli_journal_writes_and_prints_a_month(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    _clock(monkeypatch, "2026-11-04T10:22:00+08:00", "2026-11-05T09:00:00+08:00")
    added = runner.invoke(app, ["journal", "周会：确定了导出格式", "--json"])
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["entry"]["text"] == "周会：确定了导出格式"
    assert runner.invoke(app, ["journal", "private matter", "--sensitive"]).exit_code == 0
    shown = runner.invoke(app, ["journal", "--month", "2026-11"])
    assert shown.exit_code == 0
    assert "2026-11-04 10:22  周会：确定了导出格式" in shown.stdout and "private matter" not in shown.stdout
    everything = runner.invoke(app, ["journal", "--month", "2026-11", "--sensitive", "--json"])
    assert [e["sensitive"] for e in json.loads(everything.stdout)["entries"]] == [False, True]
    missing = runner.invoke(app, ["journal", "--month", "2030-01"])
    assert missing.exit_code == NotFound.exit_code and "no journal for 2030-01" in missing.stderr
    neither = runner.invoke(app, ["journal"])
    assert neither.exit_code == InvalidInput.exit_code and "--month" in neither.stderr


@pytest.mark.anyio
async def test_mcp_memory_journal(memory: Memory) -> None:
    async with connect(memory) as client:
        got = await call(client, "memory_journal", text="session summary: export designed")
        await call(client, "memory_journal", text="health detail", sensitive=True)
    assert (
        got["path"].startswith("user/journal/") and got["entry"]["text"] == "session summary: export designed"
    )
    note = memory.read(got["permalink"])
    assert [e.text for e in journal.entries(note, include_sensitive=True)] == [
        "session summary: export designed",
        "health detail",
    ]
