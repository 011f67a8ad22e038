"""Front matter written by a stranger: alias bombs, self-referring aliases, deep nesting and
oversized blocks are damaged notes (reported, skipped, left as they were), never a stall."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cairn import Memory
from cairn.errors import DamagedNote, InvalidInput
from cairn.markdown import MAX_FRONTMATTER_CHARS, MAX_FRONTMATTER_DEPTH, new_note, parse, set_fields


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The probe's file: each line an anchored list of ``width`` aliases to the line before."""
    names = [f"l{i}" for i in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(["lol"] * width) + "]"]
    for prev, cur in zip(names, names[1:], strict=False):
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * width) + "]")
    return "---\ntitle: Bomb\n" + "\n".join(lines) + "\nsensitivity: normal\n---\n\n- [fact] boom\n"


HOSTILE = {
    "alias bomb": (alias_bomb(), "alias bomb"),
    "alias into its own value": ("---\ntitle: Loop\nx: &x [1, *x]\n---\n", "points into its own value"),
    "map alias into itself": ("---\ntitle: Loop\nx: &x {a: *x}\n---\n", "points into its own value"),
    "deep flow nesting": (
        "---\nx: " + "[" * (MAX_FRONTMATTER_DEPTH + 5) + "]" * (MAX_FRONTMATTER_DEPTH + 5) + "\n---\n",
        "nest more than",
    ),
    "deep block nesting": (
        "---\nx:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 30)) + "  " * 30 + "end: 1\n---\n",
        "nest more than",
    ),
    "huge front matter": ("---\ntitle: Big\nx: " + "y" * MAX_FRONTMATTER_CHARS + "\n---\n", "characters"),
    "a long scalar repeated by aliases": (
        "---\nx: &x " + "z" * 60_000 + "\nys: [" + ", ".join(["*x"] * 8) + "]\n---\n",
        "alias bomb",
    ),
}


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=list(HOSTILE))
def test_hostile_front_matter_is_damaged_at_once(text: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(DamagedNote, match=message):
        parse(text)
    assert time.perf_counter() - started < 0.5


def test_the_bomb_names_the_line_where_it_goes_off() -> None:
    with pytest.raises(DamagedNote, match=r"front matter at line \d+: its aliases expand it past"):
        parse(alias_bomb())


@pytest.mark.parametrize(
    "front",
    [
        "title: Trip\nmodified: &day 2026-04-01\nreviewed: *day\n",
        "defaults: &d {lang: zh, tz: +08:00}\nproject:\n  <<: *d\n  name: 华东\n",
        "people: &p [张三, 李四]\nteam: *p\n",
    ],
)
def test_a_few_ordinary_aliases_still_read(front: str) -> None:
    fm = parse(f"---\n{front}---\n").frontmatter
    assert fm and all(value is not None for value in fm.values())


BENIGN = [
    "---\ntitle: 周报\ntags: [工作, 华东, 客户]\ncreated: 2026-03-01T09:00:00+08:00\n---\n\n# 周报\n",
    "---\ntitle: Trip\ndates:\n  - 2026-04-01\n  - 2026-04-09\nbudget:\n  flights: 820\n  hotel:\n"
    "    nights: 8\n    cities: [Lisbon, Porto]\n---\n\n- [plan] fly\n",
    '---\ntitle: "Quoted: title"  # a comment\nmeta: {a: 1, b: [x, y]}\nnote: |\n  two\n  lines\n---\nbody\n',
    "\ufeff---\r\ntitle: CRLF 笔记\r\nlevels:\r\n  one:\r\n    two:\r\n      three: 深\r\n---\r\nbody\r\n",
]


@pytest.mark.parametrize("text", BENIGN)
def test_benign_front_matter_parses_and_edits_byte_for_byte(text: str) -> None:
    doc = parse(text)
    assert doc.has_frontmatter and doc.frontmatter
    assert all(isinstance(v, str) for k, v in doc.frontmatter.items() if k in ("created", "title"))
    edited = set_fields(text, {"origin": "desk"})
    assert edited.startswith(text[: text.index("---", 4)])  # every line before the closing fence kept
    assert edited.endswith(text[text.index("---", 4) :])
    assert set_fields(edited, {}, remove=["origin"]) == text


def test_writes_never_produce_front_matter_that_would_not_read_back() -> None:
    deep: object = "leaf"
    for _ in range(MAX_FRONTMATTER_DEPTH):
        deep = [deep]
    with pytest.raises(InvalidInput, match="too deep"):
        new_note({"title": "t", "x": deep}, "t")
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(InvalidInput, match="too deep"):
        new_note({"title": "t", "x": looped}, "t")
    with pytest.raises(InvalidInput, match="characters"):
        new_note({"title": "t", "x": "y" * MAX_FRONTMATTER_CHARS}, "t")
    with pytest.raises(InvalidInput, match="characters"):
        set_fields("---\ntitle: t\n---\n", {"x": "y" * MAX_FRONTMATTER_CHARS})
    ok = new_note({"title": "t", "x": deep[0]}, "t")  # type: ignore[index]
    assert parse(ok).frontmatter["x"] == deep[0]  # type: ignore[index]


def test_a_planted_bomb_is_reported_by_doctor_and_skipped_by_search(memory: Memory, vault: Path) -> None:
    memory.write("Lisbon trip", observations=["[plan] fly to Lisbon in April"])
    bomb = vault / "user" / "Bomb.md"
    bomb.write_text(alias_bomb(), encoding="utf-8")
    planted = bomb.read_bytes()
    started = time.perf_counter()
    report = memory.doctor()
    hits = memory.search("Lisbon")
    boom = memory.search("boom")
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, elapsed
    assert [d.path for d in report.damaged] == ["user/Bomb.md"]
    assert "alias bomb" in report.damaged[0].error
    assert [h.title for h in hits] == ["Lisbon trip"] and boom == []
    assert bomb.read_bytes() == planted


def test_a_fresh_vault_holding_a_bomb_opens_fast(vault: Path, isolated_home: Path) -> None:
    (vault / "user").mkdir(parents=True)
    (vault / "user" / "Bomb.md").write_text(alias_bomb(), encoding="utf-8")
    started = time.perf_counter()
    with Memory.open(vault, home=isolated_home, origin="test") as mem:
        damaged = mem.doctor().damaged
        assert mem.search("boom") == []
    assert time.perf_counter() - started < 1.0
    assert [d.path for d in damaged] == ["user/Bomb.md"]


def test_an_edit_that_would_plant_a_bomb_is_refused(memory: Memory, vault: Path) -> None:
    note = memory.write("Plain", observations=["[fact] nothing special"])
    path = vault / note.path
    before = path.read_bytes()
    bomb_lines = alias_bomb().split("\n")[2:11]  # the nine anchored lines
    with pytest.raises(InvalidInput, match="would break the note's front matter.*alias bomb"):
        memory.edit(note.permalink, "sensitivity: normal", "\n".join(bomb_lines))
    assert path.read_bytes() == before
    with pytest.raises(InvalidInput, match="points into its own value"):
        memory.edit(note.permalink, "sensitivity: normal", "x: &x [*x]")
    assert path.read_bytes() == before
    assert memory.doctor().damaged == ()
