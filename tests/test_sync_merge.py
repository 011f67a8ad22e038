"""The pure three-way merge sync uses when a note changed on both sides (cairn.sync.merge)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cairn.sync.merge import merge, merge_lines

BASE = """---
title: DS
modified: 2026-10-01T10:00:00+08:00
origin: laptop
---

# DS

## Observations
- [teacher] Deng

## Relations
- belongs_to [[Timetable]]
"""


def _append(text: str, after: str, line: str, modified: str, origin: str) -> str:
    text = text.replace(after + "\n", after + "\n" + line + "\n", 1)
    text = text.replace("modified: 2026-10-01T10:00:00+08:00", f"modified: {modified}")
    return text.replace("origin: laptop", f"origin: {origin}")


def test_two_appends_to_one_section_keep_both_lines_ours_first_and_the_later_stamp() -> None:
    ours = _append(BASE, "- [teacher] Deng", "- [room] 3rd building", "2026-10-02T09:00:00+08:00", "phone")
    theirs = _append(BASE, "- [teacher] Deng", "- [deadline] week 2", "2026-10-02T11:00:00+08:00", "bot")
    merged = merge(BASE, ours, theirs)
    assert merged is not None
    lines = merged.splitlines()
    assert (
        lines.index("- [teacher] Deng")
        < lines.index("- [room] 3rd building")
        < lines.index("- [deadline] week 2")
    )
    assert lines.index("- [deadline] week 2") < lines.index("## Relations")
    assert "modified: 2026-10-02T11:00:00+08:00" in lines and "origin: bot" in lines
    assert "origin: phone" not in lines


def test_additions_in_two_sections_land_in_their_sections() -> None:
    ours = _append(BASE, "- [teacher] Deng", "- [room] 3", "2026-10-02T09:00:00+08:00", "phone")
    theirs = _append(
        BASE, "- belongs_to [[Timetable]]", "- uses [[Book]]", "2026-10-01T12:00:00+08:00", "bot"
    )
    merged = merge(BASE, ours, theirs)
    assert merged is not None
    assert merged.index("- [room] 3") < merged.index("## Relations") < merged.index("- uses [[Book]]")
    assert "origin: phone" in merged  # ours is later


def test_a_line_both_sides_added_is_kept_once() -> None:
    ours = _append(BASE, "- [teacher] Deng", "- [room] 3", "2026-10-02T09:00:00+08:00", "phone")
    theirs = _append(BASE, "- [teacher] Deng", "- [room] 3", "2026-10-02T09:00:05+08:00", "bot")
    merged = merge(BASE, ours, theirs)
    assert merged is not None and merged.count("- [room] 3") == 1


def test_an_edited_line_on_both_sides_does_not_merge() -> None:
    ours = BASE.replace("- [teacher] Deng", "- [teacher] Deng Junhui")
    theirs = BASE.replace("- [teacher] Deng", "- [teacher] Prof. Deng")
    assert merge(BASE, ours, theirs) is None


def test_a_removed_line_on_one_side_and_an_addition_on_the_other_does_not_merge() -> None:
    ours = BASE.replace("- [teacher] Deng\n", "")
    theirs = _append(BASE, "- [teacher] Deng", "- [room] 3", "2026-10-02T09:00:00+08:00", "bot")
    assert merge(BASE, ours, theirs) is None


def test_a_field_changed_differently_on_both_sides_does_not_merge() -> None:
    ours = BASE.replace("title: DS", "title: Data structures")
    theirs = BASE.replace("title: DS", "title: DSA") + "- extra\n"
    assert merge(BASE, ours, theirs) is None


def test_one_side_unchanged_takes_the_other_whole() -> None:
    edited = BASE.replace("Deng", "Deng Junhui")
    assert merge(BASE, BASE, edited) == edited
    assert merge(BASE, edited, BASE) == edited


def test_without_a_base_two_new_notes_only_merge_when_equal() -> None:
    assert merge("", BASE, BASE) == BASE
    assert merge("", BASE, BASE.replace("DS", "Other")) is None


lines = st.lists(st.sampled_from(["- [a] x", "- [b] y", "", "## S", "- [c] z", "text"]), max_size=8)


@given(base=lines, ours_added=lines, theirs_added=lines, split=st.integers(0, 8))
def test_the_union_of_appends_holds_every_line_of_each_side(
    base: list[str], ours_added: list[str], theirs_added: list[str], split: int
) -> None:
    cut = min(split, len(base))
    ours = base[:cut] + ours_added + base[cut:]
    theirs = base + theirs_added

    def text(lines: list[str]) -> str:
        return "".join(line + "\n" for line in lines)

    merged = merge_lines(text(base), text(ours), text(theirs))
    assert merged is not None
    out = merged.split("\n")
    for side in (ours, theirs):
        assert all(line in out for line in side if line.strip())
    rest = iter(out)  # the base's lines keep their order
    assert all(any(line == x for x in rest) for line in base)
