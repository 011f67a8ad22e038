from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn import vault as vault_module
from cairn.errors import InvalidInput
from cairn.vault import (
    atomic_write,
    folder_scope,
    make_permalink,
    parse_moment,
    parse_timezone,
    safe_filename,
    safe_folder,
    scan_notes,
    scope_folder,
    slugify,
    validate_scope,
)


@pytest.mark.parametrize(
    ("scope", "folder"),
    [
        ("user", "user"),
        ("agent:bot_1", "agent-bot_1"),
        ("group:team-a", "group-team-a"),
        ("workspace:cairn", "workspace-cairn"),
    ],
)
def test_scope_folders_round_trip(scope: str, folder: str) -> None:
    assert scope_folder(scope) == folder
    assert folder_scope(folder) == scope


@pytest.mark.parametrize(
    "scope", ["", "admin", "agent:", "agent:../x", "agent:a b", "group:名字", "user:x", "agent:a:b"]
)
def test_bad_scopes_are_refused(scope: str) -> None:
    with pytest.raises(InvalidInput, match="invalid scope"):
        validate_scope(scope)


def test_folders_that_are_not_scopes_are_ignored() -> None:
    assert folder_scope("notes") is None
    assert folder_scope(".trash") is None
    assert folder_scope("agent-") is None


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("数据结构（2026 秋）", "数据结构（2026 秋）"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("/abs/path", "_abs_path"),
        ('a:b*c?d"e<f>g|h', "a_b_c_d_e_f_g_h"),
        ("...hidden", "hidden"),
        ("CON", "CON_"),
        ("tab\tand\nnewline", "tab and newline"),
    ],
)
def test_safe_filename(title: str, name: str) -> None:
    assert safe_filename(title) == name


@pytest.mark.parametrize("title", ["", "   ", "...", "/", "\x00"])
def test_titles_without_a_usable_name_are_refused(title: str) -> None:
    with pytest.raises(InvalidInput):
        safe_filename(title)


@given(st.text(min_size=1, max_size=300))
def test_safe_filename_never_escapes(title: str) -> None:
    try:
        name = safe_filename(title)
    except InvalidInput:
        return
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not name.startswith(".") and name not in ("", "..")
    assert len(name.encode("utf-8")) <= 200


@pytest.mark.parametrize("folder", ["../x", "a/../../b", "/etc", "C:\\x", ".trash", "a/.conflict"])
def test_folders_outside_the_scope_are_refused(folder: str) -> None:
    with pytest.raises(InvalidInput):
        safe_folder(folder)


def test_folders_are_normalised() -> None:
    assert safe_folder("courses\\2026//秋/") == "courses/2026/秋"
    assert safe_folder("") == ""


def test_slug_keeps_cjk_and_folds_ascii() -> None:
    assert slugify("数据结构（2026 秋）") == "数据结构-2026-秋"
    assert slugify("Café Résumé!") == "cafe-resume"
    assert slugify("!!!") == "note"


def test_permalinks_are_unique_and_deterministic() -> None:
    first = make_permalink("Data Structures", "user", set())
    assert first.startswith("data-structures-") and len(first.rsplit("-", 1)[1]) == 4
    assert make_permalink("Data Structures", "user", set()) == first
    second = make_permalink("Data Structures", "user", {first})
    assert second != first and second.startswith("data-structures-")


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "d" / "note.md"
    atomic_write(target, "一".encode())
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert os.listdir(target.parent) == ["note.md"]


def test_scan_skips_hidden_and_non_scope_folders(tmp_path: Path) -> None:
    for rel in ["user/a.md", "user/.trash/b.md", "user/sub/c.md", "other/d.md", "agent-x/e.md", "user/f.txt"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    assert sorted(scan_notes(tmp_path)) == ["agent-x/e.md", "user/a.md", "user/sub/c.md"]


@pytest.mark.parametrize("by_fd", [True, False])
def test_scan_reads_stat_of_each_note_and_never_follows_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_fd: bool
) -> None:
    """Both ways of listing (through a folder descriptor, or by path where scandir takes none)."""
    if by_fd and not vault_module._SCAN_BY_FD:
        pytest.skip("this platform's scandir takes no descriptor")
    monkeypatch.setattr(vault_module, "_SCAN_BY_FD", by_fd)
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "user" / "笔记" / "深").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("out of the vault", encoding="utf-8")
    (vault / "user" / "笔记" / "深" / "数据结构.md").write_text("一二三", encoding="utf-8")
    (vault / "user" / "a.md").write_text("x" * 7, encoding="utf-8")
    (vault / "user" / "linked").symlink_to(outside, target_is_directory=True)
    (vault / "user" / "link.md").symlink_to(outside / "secret.md")
    (vault / "agent-x").symlink_to(outside, target_is_directory=True)
    found = scan_notes(vault)
    assert sorted(found) == ["user/a.md", "user/笔记/深/数据结构.md"]
    for rel, (size, mtime_ns) in found.items():
        st = os.stat(vault / rel)
        assert (size, mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_parse_moment_dates_times_and_spans() -> None:
    tz = timezone(timedelta(hours=8))
    start = parse_moment("2026-11-01", tz)
    end = parse_moment("2026-11-01", tz, end_of_day=True)
    assert datetime.fromtimestamp(start, tz) == datetime(2026, 11, 1, tzinfo=tz)
    assert 86399 < end - start < 86400
    assert parse_moment("2026-11-01T08:00:00+00:00", tz) == datetime(2026, 11, 1, 8, tzinfo=UTC).timestamp()
    week = parse_moment("7d", tz)
    assert abs(datetime.now(UTC).timestamp() - 7 * 86400 - week) < 5
    with pytest.raises(InvalidInput, match="ISO date"):
        parse_moment("last tuesday", tz)


def test_time_zones() -> None:
    assert parse_timezone("+08:00").utcoffset(None) == timedelta(hours=8)
    assert parse_timezone("Asia/Shanghai").utcoffset(datetime(2026, 1, 1)) == timedelta(hours=8)
    with pytest.raises(InvalidInput, match="time zone"):
        parse_timezone("Mars/Olympus")
