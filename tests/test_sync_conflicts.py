"""Settling sync's conflict copies (cairn.sync.conflicts, ``Memory.conflicts`` and
``resolve_conflict``): a real conflict made by two vaults on one folder remote (``file://``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.sync.conflicts import parse
from conflict_helpers import make_conflict


@pytest.fixture
def conflicted(tmp_path: Path):  # type: ignore[no-untyped-def]
    b, path, copy = make_conflict(tmp_path)
    yield b, path, copy
    b.close()


def test_listing_names_the_copy_its_note_and_both_texts(conflicted) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    [item] = b.conflicts()
    assert (item["path"], item["target"], item["origin"]) == (copy, path, "a")
    assert item["time"].endswith("+00:00") and item["time"][:4].isdigit()
    assert "Wednesday" in item["text"] and "Friday" in item["note"]["text"]
    assert (
        item["note"]["version"] == b.read(path).version
        and item["note"]["permalink"] == b.read(path).permalink
    )


def test_keep_mine_removes_the_copy_and_leaves_the_note(conflicted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    before = (b.vault / path).read_bytes()
    assert (tmp_path / "remote" / copy).exists()  # the copy was pushed for every device to see
    answer = b.resolve_conflict(copy, keep="mine")
    assert answer["keep"] == "mine" and not (b.vault / copy).exists()
    assert (b.vault / path).read_bytes() == before and b.conflicts() == []
    assert b.sync_status()["conflicts"] == []
    assert not (tmp_path / "remote" / copy).exists()  # the removal is pushed with the write lock's sync


def test_keep_theirs_takes_the_copy_and_the_search_follows(conflicted) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    version = b.read(path).version
    b.resolve_conflict(copy, keep="theirs", if_version=version)
    text = (b.vault / path).read_text(encoding="utf-8")
    assert "Wednesday" in text and "Friday" not in text and not (b.vault / copy).exists()
    assert [h.path for h in b.search("Wednesday")] == [path]


def test_a_merge_by_hand_is_saved(conflicted) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    note = b.read(path)
    merged = note.text.replace("- [when] Friday", "- [when] Friday\n- [maybe] Wednesday")
    b.resolve_conflict(copy, keep="merged", text=merged, if_version=note.version)
    assert [o.strip() for o in b.read(path).text.splitlines() if o.startswith("- [")] == [
        "- [when] Friday",
        "- [maybe] Wednesday",
    ]
    assert not (b.vault / copy).exists()
    with pytest.raises(InvalidInput, match="merged text"):
        b.resolve_conflict(copy, keep="merged")


def test_a_note_changed_meanwhile_is_not_overwritten_and_the_copy_stays(conflicted) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    seen = b.read(path).version
    b.append(b.read(path).permalink, "[note] changed by another writer")
    for keep, text in (("theirs", None), ("merged", "whatever")):
        with pytest.raises(Conflict, match="changed since"):
            b.resolve_conflict(copy, keep=keep, text=text, if_version=seen)
    assert "changed by another writer" in (b.vault / path).read_text(encoding="utf-8")
    assert (b.vault / copy).exists()


def test_paths_outside_the_conflict_folder_and_links_are_refused(conflicted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b, path, copy = conflicted
    for bad in (path, "../vault-a/" + path, ".conflict/../" + path, "/etc/passwd", ".conflict", ""):
        with pytest.raises(InvalidInput, match="not a conflict copy"):
            b.resolve_conflict(bad, keep="mine")
    assert (b.vault / path).exists()
    with pytest.raises(InvalidInput):
        b.resolve_conflict(copy, keep="both")
    # a link named like a copy, pointing out of the vault: not listed, not followed, not removed
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    link = b.vault / ".conflict" / "user" / "Other__x__20260101T000000Z.md"
    os.symlink(outside, link)
    assert [c["path"] for c in b.conflicts()] == [copy]
    with pytest.raises(NotFound):
        b.resolve_conflict(link.relative_to(b.vault).as_posix(), keep="theirs")
    assert link.is_symlink() and outside.read_text(encoding="utf-8") == "secret"


def test_copy_names_are_parsed() -> None:
    name = parse(".conflict/user/notes/周会__laptop__20261201T101500Z-2.md")
    assert (name.target, name.origin, name.time) == (
        "user/notes/周会.md",
        "laptop",
        "2026-12-01T10:15:00+00:00",
    )
    assert parse(".conflict/cairn__a__20261201T101500Z.toml").target == "cairn.toml"
    with pytest.raises(InvalidInput):
        parse(".conflict/user/no-parts.md")


def test_cli_lists_and_keeps_theirs(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from cairn.cli import app

    b, path, copy = make_conflict(tmp_path)
    b.close()
    runner = CliRunner()
    where = ["--vault", str(b.vault), "--home", str(b.home)]
    listed = runner.invoke(app, [*where, "conflicts", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [c["path"] for c in json.loads(listed.stdout)["conflicts"]] == [copy]
    agent = runner.invoke(app, [*where, "--as-agent", "conflicts", "keep", copy, "theirs"])
    assert agent.exit_code != 0 and "only a person" in agent.stderr
    bad = runner.invoke(app, [*where, "conflicts", "keep", path, "mine"])
    assert bad.exit_code == 2 and "not a conflict copy" in bad.stderr
    done = runner.invoke(app, [*where, "conflicts", "keep", copy, "theirs"])
    assert done.exit_code == 0, done.output
    assert "Wednesday" in (b.vault / path).read_text(encoding="utf-8") and not (b.vault / copy).exists()
