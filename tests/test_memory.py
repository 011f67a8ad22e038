"""The Memory service end to end on real files and a real SQLite index."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apsw
import pytest
from typer.testing import CliRunner

from cairn import AlreadyExists, Busy, DamagedNote, EditMismatch, InvalidInput, Memory, NotFound, ScopeDenied
from cairn.cli import app
from cairn.markdown import parse

COURSE = dict(
    type="course",
    tags=["课程", "大二上"],
    observations=["[teacher] 邓俊辉 #重要 (讲得快，坐前排)", "[deadline] 大作业 12 月第 2 周截止"],
    relations=["belongs_to [[我的课表 2026 秋]]", '"depends on" [[线性代数（2026 秋）]] (先修)'],
)


def settle(mem: Memory, paths: list[Path]) -> None:
    """Date the files back out of the window in which a fresh mtime is checked again, and index
    that: the next calls then find nothing to catch up on, and only read the index."""
    an_hour_ago = time.time() - 3600
    for path in paths:
        os.utime(path, (an_hour_ago, an_hour_ago))
    mem.refresh()


def hold_exclusively(index_path: Path) -> apsw.Connection:
    """Another process's connection holding the index so that no other may even read it."""
    holder = apsw.Connection(str(index_path))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE meta SET value = value")
    return holder


def bump_mtime(path: Path) -> None:
    """Make sure a hand edit is visible by mtime even on coarse-grained file systems."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_write_creates_a_note_in_the_documented_format(memory: Memory, vault: Path) -> None:
    note = memory.write("数据结构（2026 秋）", **COURSE)
    assert note.path == "user/数据结构（2026 秋）.md"
    text = (vault / note.path).read_text(encoding="utf-8")
    doc = parse(text)
    assert doc.frontmatter["title"] == "数据结构（2026 秋）"
    assert doc.frontmatter["permalink"] == note.permalink
    assert note.permalink.startswith("数据结构-2026-秋-")
    assert doc.frontmatter["tags"] == ["课程", "大二上"]
    assert doc.frontmatter["origin"] == "test"
    assert doc.frontmatter["created"] == doc.frontmatter["modified"]
    assert [(o.category, o.content, o.tags, o.context) for o in doc.observations] == [
        ("teacher", "邓俊辉", ("重要",), "讲得快，坐前排"),
        ("deadline", "大作业 12 月第 2 周截止", (), None),
    ]
    assert [(r.type, r.target, r.context) for r in doc.relations if not r.inline] == [
        ("belongs_to", "我的课表 2026 秋", None),
        ("depends on", "线性代数（2026 秋）", "先修"),
    ]
    assert memory.read(note.permalink).text == text
    assert memory.read(f"memory://{note.permalink}").path == note.path
    assert memory.read(note.path).permalink == note.permalink
    assert memory.read("数据结构（2026 秋）").permalink == note.permalink


def test_times_carry_the_vault_offset(vault: Path, isolated_home: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "cairn.toml").write_text('timezone = "+08:00"\n', encoding="utf-8")
    with Memory.open(vault, home=isolated_home) as mem:
        note = mem.write("Offset")
    assert note.created.endswith("+08:00")


def test_write_refuses_to_overwrite_unless_asked(memory: Memory, vault: Path) -> None:
    first = memory.write("Travel", observations=["[pref] window seat"], fields={"custom": "kept"})
    before = (vault / first.path).read_bytes()
    with pytest.raises(AlreadyExists, match="already exists"):
        memory.write("Travel", observations=["[pref] aisle seat"])
    assert (vault / first.path).read_bytes() == before
    time.sleep(1.1)
    second = memory.write("Travel", observations=["[pref] aisle seat"], overwrite=True)
    assert second.permalink == first.permalink
    assert second.created == first.created
    assert second.modified > first.modified
    assert second.frontmatter["custom"] == "kept"
    assert [o.content for o in second.observations] == ["aisle seat"]


@pytest.mark.parametrize(
    ("first", "second"), [("Python", "python"), ("ＡＢＣ plan", "ABC plan"), ("Cafe\u0301", "Café")]
)
def test_a_title_differing_only_in_case_width_or_form_is_the_same_note(
    memory: Memory, vault: Path, first: str, second: str
) -> None:
    note = memory.write(first, observations=["[fact] one"])
    with pytest.raises(AlreadyExists, match="already exists"):
        memory.write(second, observations=["[fact] two"])
    replaced = memory.write(second, observations=["[fact] two"], overwrite=True)
    assert replaced.path == note.path and replaced.permalink == note.permalink
    assert [p.relative_to(vault).as_posix() for p in vault.rglob("*.md")] == [note.path]
    assert [o.content for o in memory.read(second).observations] == ["two"]


def test_a_hand_made_file_is_a_twin_by_its_name_whatever_its_title(memory: Memory, vault: Path) -> None:
    (vault / "user" / "projects").mkdir(parents=True)
    made = vault / "user" / "projects" / "python.md"
    made.write_text("---\ntitle: Snake handling\n---\n\n- [fact] venomous\n", encoding="utf-8")
    with pytest.raises(AlreadyExists, match="python.md"):
        memory.write("Python", folder="projects", observations=["[fact] a language"])
    assert made.read_text(encoding="utf-8").endswith("- [fact] venomous\n")
    memory.write("Python", folder="PROJECTS", observations=["[fact] a language"], overwrite=True)
    assert [p.relative_to(vault).as_posix() for p in vault.rglob("*.md")] == ["user/projects/python.md"]
    assert [o.content for o in memory.read("Python").observations] == ["a language"]


@pytest.mark.parametrize(
    "frontmatter_title",
    ['"Weekly\\tplan"', '"Weekly\\nplan"', "|-\n  Weekly\n  plan", '"Weekly\\u3000 plan "'],
)
def test_a_hand_written_title_is_kept_on_one_line(
    memory: Memory, vault: Path, frontmatter_title: str
) -> None:
    path = vault / "user" / "weekly.md"
    path.write_text(f"---\ntitle: {frontmatter_title}\n---\n\n- [todo] buy milk\n", encoding="utf-8")
    before = path.read_bytes()
    assert memory.read("Weekly plan").title == "Weekly plan"
    assert [n.title for n in memory.list()] == ["Weekly plan"]
    assert [h.title for h in memory.search("milk")] == ["Weekly plan"]
    assert path.read_bytes() == before  # read as one line, not rewritten


@pytest.mark.parametrize("title", ["../../etc/passwd", "/etc/passwd", "..", "a/../../b", "C:\\Windows\\x"])
def test_titles_never_escape_the_scope_folder(memory: Memory, vault: Path, title: str) -> None:
    try:
        note = memory.write(title)
    except InvalidInput:
        return
    resolved = (vault / note.path).resolve()
    assert (vault / "user").resolve() in resolved.parents
    assert resolved.parent == (vault / "user").resolve()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"title": ""}, "title is empty"),
        ({"title": "x" * 500}, "characters"),
        ({"title": "t", "observations": ["no category"]}, "category"),
        ({"title": "t", "relations": ["just text"]}, "relation"),
        ({"title": "t", "type": "two words"}, "type"),
        ({"title": "t", "tags": ["a,b"]}, "tag"),
        ({"title": "t", "folder": "../up"}, "folder"),
        ({"title": "t", "body": "x" * (3 * 1024 * 1024)}, "MiB"),
        ({"title": "t", "sensitivity": "secret"}, "sensitivity"),
        ({"title": "t", "fields": {"permalink": "mine"}}, "permalink"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    memory: Memory, vault: Path, kwargs: dict, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.write(**kwargs)
    assert [p for p in (vault / "user").rglob("*") if p.is_file()] == []


def test_append_adds_observations_and_relations_and_never_creates(memory: Memory, vault: Path) -> None:
    note = memory.write("Coffee", observations=["[pref] oat milk"])
    memory.append(note.permalink, "[pref] no sugar #diet")
    after = memory.append(note.permalink, "likes [[Cafe Nero]]")
    assert [o.content for o in after.observations] == ["oat milk", "no sugar"]
    assert any(r.target == "Cafe Nero" and not r.inline for r in after.relations)
    with pytest.raises(NotFound, match="no note"):
        memory.append("cofee-typo", "[pref] x")
    with pytest.raises(InvalidInput):
        memory.append(note.permalink, "plain words")
    assert sorted(p.name for p in (vault / "user").iterdir()) == ["Coffee.md"]


def test_edit_is_literal_and_checks_the_count(memory: Memory, vault: Path) -> None:
    note = memory.write("Editor", observations=["[a] vim", "[b] vim again"])
    path = vault / note.path
    before = path.read_bytes()
    with pytest.raises(EditMismatch, match="does not occur"):
        memory.edit(note.permalink, "emacs", "nano")
    with pytest.raises(EditMismatch, match="occurs 2 times"):
        memory.edit(note.permalink, "vim", "helix")
    with pytest.raises(InvalidInput, match="front matter"):
        memory.edit(note.permalink, "title: Editor", "title: [broken")
    assert path.read_bytes() == before
    edited = memory.edit(note.permalink, "vim", "helix", expected=2)
    assert [o.content for o in edited.observations] == ["helix", "helix again"]
    assert memory.search("helix")[0].permalink == note.permalink
    assert memory.search("vim") == []


def test_a_change_that_would_not_read_back_is_refused_unwritten(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import markdown

    note = memory.write("Plans", observations=["[plan] fly"])
    before = (vault / note.path).read_bytes()
    # Whatever a rewrite gets wrong, the file on disk must stay as it was.
    monkeypatch.setattr(
        markdown, "set_fields", lambda text, *a, **k: text.replace("title: Plans", "title: [Plans")
    )
    with pytest.raises(InvalidInput, match="not written"):
        memory.append(note.permalink, "[plan] book a hotel")
    assert (vault / note.path).read_bytes() == before
    monkeypatch.undo()
    assert memory.doctor().damaged == ()


def test_append_to_front_matter_with_an_alias_keeps_the_note_readable(memory: Memory, vault: Path) -> None:
    (vault / "user").mkdir(parents=True, exist_ok=True)
    (vault / "user/Trip.md").write_text(
        "---\ntitle: Trip\nmodified: &day 2026-04-01T09:00:00+08:00\nreviewed: *day\n---\n\n- [plan] fly to Lisbon\n",
        encoding="utf-8",
    )
    memory.append("Trip", "[plan] book a hotel")
    note = memory.read("Trip")
    assert note.frontmatter["reviewed"] == "2026-04-01T09:00:00+08:00"
    assert note.modified != "2026-04-01T09:00:00+08:00"
    assert [o.content for o in note.observations] == ["fly to Lisbon", "book a hotel"]
    assert memory.doctor().damaged == ()


def test_delete_moves_to_trash_and_restore_brings_back(memory: Memory, vault: Path) -> None:
    note = memory.write("Old plan", folder="tasks", observations=["[status] abandoned"])
    memory.delete(note.permalink, reason="obsolete")
    assert not (vault / note.path).exists()
    trashed = vault / "user/.trash/tasks/Old plan.md"
    assert parse(trashed.read_text(encoding="utf-8")).frontmatter["deleted_reason"] == "obsolete"
    assert memory.search("abandoned") == []
    assert memory.list() == []
    with pytest.raises(NotFound):
        memory.read(note.permalink)
    restored = memory.restore(note.permalink)
    assert restored.path == note.path and restored.permalink == note.permalink
    assert "deleted" not in restored.frontmatter
    assert not trashed.exists()
    assert memory.search("abandoned")[0].permalink == note.permalink
    with pytest.raises(NotFound):
        memory.restore("never-was-1234")


def test_one_title_in_two_folders_gets_two_permalinks(memory: Memory) -> None:
    first = memory.write("Weekly plan", folder="work", observations=["[plan] ship the release"])
    second = memory.write("Weekly plan", folder="home", observations=["[plan] fix the bike"])
    assert first.permalink != second.permalink
    assert memory.read(second.permalink).path == second.path


def test_restoring_a_note_whose_permalink_was_taken_meanwhile_gives_it_a_new_one(memory: Memory) -> None:
    old = memory.write("Victim", observations=["[fact] the first one"])
    memory.delete(old.permalink)
    new = memory.write("Victim", folder="again", observations=["[fact] the second one"])
    assert new.permalink == old.permalink  # free once the first was deleted
    restored = memory.restore(old.permalink)
    assert restored.permalink != new.permalink and restored.path == old.path
    assert [o.content for o in memory.read(restored.permalink).observations] == ["the first one"]
    assert [o.content for o in memory.read(new.permalink).observations] == ["the second one"]
    assert memory.doctor().duplicate_permalinks == ()


def _inotify_instances() -> int:
    """The inotify instances this process holds: file descriptors the kernel names so."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own descriptor, closed since
            held += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    return held


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_memory_dropped_without_close_gives_its_inotify_instance_back(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_WATCH", "1")
    before = _inotify_instances()
    memory = Memory.open(vault, home=isolated_home)
    assert memory.status()["freshness"] == "inotify"
    assert _inotify_instances() == before + 1
    del memory
    gc.collect()
    assert _inotify_instances() == before


@pytest.mark.parametrize("watch", ["1", "0"], ids=["inotify", "scan"])
def test_hand_edits_are_seen_by_the_next_call(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    monkeypatch.setenv("CAIRN_WATCH", watch)
    memory = Memory.open(vault, home=isolated_home)
    assert memory.status()["freshness"] == ("inotify" if watch == "1" else "scan")
    note = memory.write("Lunch", observations=["[pref] 喜欢吃面"])
    path = vault / note.path
    path.write_text(path.read_text(encoding="utf-8").replace("喜欢吃面", "喜欢吃饺子"), encoding="utf-8")
    bump_mtime(path)
    assert [h.permalink for h in memory.search("饺子")] == [note.permalink]
    assert memory.search("吃面") == []
    (vault / "user/Hand made.md").write_text(
        "# Hand made\n\n- [fact] written in an editor\n", encoding="utf-8"
    )
    assert memory.search("editor")[0].title == "Hand made"
    path.unlink()
    assert memory.search("饺子") == []
    (vault / "user/new/deeper").mkdir(parents=True)
    (vault / "user/new/deeper/Fresh.md").write_text("- [fact] 新建的文件夹里的笔记\n", encoding="utf-8")
    assert [h.path for h in memory.search("文件夹")] == ["user/new/deeper/Fresh.md"]
    (vault / "user/new/deeper/Fresh.md").rename(vault / "user/Moved.md")
    assert [h.path for h in memory.search("文件夹")] == ["user/Moved.md"]
    (vault / "user/new").rename(vault / "user/renamed")
    (vault / "user/renamed/deeper/Late.md").write_text("- [fact] latecomer\n", encoding="utf-8")
    assert [h.path for h in memory.search("latecomer")] == ["user/renamed/deeper/Late.md"]
    memory.close()


def test_a_changed_note_keeps_its_place_in_the_index(memory: Memory, vault: Path) -> None:
    notes = [memory.write(f"Shelf {i}", observations=[f"[item] jar {i}"]) for i in range(3)]
    ids = [memory._index.row_by_path(n.path).id for n in notes]
    memory.append(notes[1].permalink, "[item] lid for the marmalade jar")
    path = vault / notes[2].path
    path.write_text(path.read_text(encoding="utf-8").replace("jar 2", "crock 2"), encoding="utf-8")
    bump_mtime(path)
    assert [h.title for h in memory.search("marmalade")] == ["Shelf 1"]
    assert [h.title for h in memory.search("crock")] == ["Shelf 2"]
    assert [memory._index.row_by_path(n.path).id for n in notes] == ids
    assert sorted(h.title for h in memory.search("jar")) == ["Shelf 0", "Shelf 1"]  # old words gone
    (vault / "user/Fresh.md").write_text("- [item] a new tin\n", encoding="utf-8")
    assert memory.search("tin")[0].title == "Fresh"
    assert memory._index.row_by_path("user/Fresh.md").id not in ids


def test_the_write_ahead_log_is_cut_back_after_a_checkpoint(memory: Memory) -> None:
    from cairn.index import WAL_SIZE_LIMIT

    wal = Path(f"{memory.index_path}-wal")
    for i in range(24):  # about 2 MB of index pages, in many small transactions
        memory.write(f"Log {i}", body="\n".join(f"entry {i}-{j} " + "word " * 12 for j in range(1200)))
    assert wal.stat().st_size > 2 * WAL_SIZE_LIMIT
    memory._index.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    memory.write("After the checkpoint")
    assert wal.stat().st_size <= WAL_SIZE_LIMIT


def test_nothing_is_read_or_written_through_a_symbolic_link(
    memory: Memory, vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(
        "---\ntitle: Bank\napi_note: OUTSIDE\n---\n\n- [x] outside\n", encoding="utf-8"
    )
    (vault / "user").mkdir(parents=True, exist_ok=True)
    (vault / "user/linked").symlink_to(outside, target_is_directory=True)
    (vault / "user/Bank.md").symlink_to(outside / "secret.md")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    with pytest.raises(InvalidInput, match="symbolic link"):
        memory.write("Escaped", folder="linked", observations=["[fact] would land outside"])
    with pytest.raises(InvalidInput, match="symbolic link"):
        memory.write("Bank", observations=["[fact] mine"], overwrite=True)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert memory.search("outside") == [] and memory.list() == []


@pytest.mark.parametrize("watch", ["1", "0"], ids=["inotify", "scan"])
def test_a_note_replaced_by_a_link_is_no_longer_a_note(
    vault: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    monkeypatch.setenv("CAIRN_WATCH", watch)
    with Memory.open(vault, home=isolated_home) as memory:
        note = memory.write("Plain", observations=["[fact] walnut"])
        (tmp_path / "elsewhere.md").write_text("- [fact] OUTSIDE THE VAULT walnut\n", encoding="utf-8")
        (vault / note.path).unlink()
        (vault / note.path).symlink_to(tmp_path / "elsewhere.md")
        assert memory.search("walnut") == []
        with pytest.raises(NotFound):
            memory.read(note.permalink)


def test_a_file_name_that_is_not_utf8_is_passed_over(memory: Memory, vault: Path) -> None:
    memory.write("Good", observations=["[fact] goodword"])
    os.makedirs(os.fsencode(vault / "user"), exist_ok=True)
    with open(os.path.join(os.fsencode(vault / "user"), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"- [fact] goodword in latin-1 name\n")
    assert [h.title for h in memory.search("goodword")] == ["Good"]
    assert [n.title for n in memory.list()] == ["Good"]
    (named,) = memory.doctor().damaged  # not indexed, but not hidden from the one who can rename it
    assert memory.refresh().skipped == (named,)  # each full look names it again
    assert named.path == "user/caf\\xe9.md" and "not UTF-8" in named.error
    assert "caf\\\\xe9.md" in json.dumps(memory.doctor().to_dict())  # shown escaped, in any face


def test_a_file_with_another_extension_is_not_taken_for_a_notes_twin(memory: Memory, vault: Path) -> None:
    (vault / "user").mkdir(parents=True, exist_ok=True)
    (vault / "user/Recipes.MD").write_text("- [fact] pancakes\n", encoding="utf-8")
    note = memory.write("Recipes", observations=["[fact] soup"])
    assert note.path == "user/Recipes.md"
    assert (vault / "user/Recipes.MD").read_text(encoding="utf-8") == "- [fact] pancakes\n"
    assert [h.path for h in memory.search("soup")] == ["user/Recipes.md"]


def test_names_written_decomposed_match_their_composed_spelling(memory: Memory, vault: Path) -> None:
    nfd = "Re\u0301unions"  # what macOS writes for a folder named Réunions
    (vault / "user" / nfd).mkdir(parents=True)
    (vault / "user" / nfd / "Lundi.md").write_text("- [fact] ordre du jour\n", encoding="utf-8")
    (vault / "user/Cafe.md").write_text(
        "---\npermalink: cafe\u0301-notes\n---\n- [fact] espresso\n", encoding="utf-8"
    )
    (vault / "user/Blank.md").write_text(
        "---\npermalink: '   '\n---\n- [fact] nothing given\n", encoding="utf-8"
    )
    assert [n.title for n in memory.list(folder="Réunions")] == ["Lundi"]
    assert [h.title for h in memory.search("ordre", folder="Réunions")] == ["Lundi"]
    note = memory.write("Mardi", folder="Réunions", observations=["[fact] suite"])
    assert note.path == f"user/{nfd}/Mardi.md"  # into the folder already there, not a second one
    assert [p.name for p in (vault / "user").iterdir() if p.is_dir()] == [nfd]
    assert memory.read("café-notes").path == "user/Cafe.md"  # composed, as typed
    assert memory.read("memory://cafe\u0301-notes").path == "user/Cafe.md"
    assert memory.read("user/Blank.md").permalink.startswith("blank-")


@pytest.mark.parametrize("watch", ["1", "0"], ids=["inotify", "scan"])
def test_a_vault_folder_removed_and_made_again_is_followed_again(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    import shutil

    monkeypatch.setenv("CAIRN_WATCH", watch)
    with Memory.open(vault, home=isolated_home) as memory:
        memory.write("Before", observations=["[fact] walnut"])
        shutil.rmtree(vault)
        assert memory.search("walnut") == []  # a call while the folder is gone
        (vault / "user").mkdir(parents=True)
        (vault / "user/After.md").write_text("- [fact] walnut again\n", encoding="utf-8")
        assert [h.title for h in memory.search("walnut")] == ["After"]
        (vault / "user/Later.md").write_text("- [fact] walnut later\n", encoding="utf-8")
        assert sorted(h.title for h in memory.search("walnut")) == ["After", "Later"]


def test_permalink_survives_a_rename_and_a_move(memory: Memory, vault: Path) -> None:
    note = memory.write("Gym", observations=["[habit] mornings"])
    moved = vault / "user/health/Gym routine.md"
    moved.parent.mkdir()
    (vault / note.path).rename(moved)
    again = memory.read(note.permalink)
    assert again.path == "user/health/Gym routine.md"
    assert memory.append(note.permalink, "[habit] three times a week").path == again.path


def test_damaged_files_are_reported_left_alone_and_never_overwritten(memory: Memory, vault: Path) -> None:
    memory.write("Fine", observations=["[a] still works"])
    broken = vault / "user/Broken.md"
    broken.write_bytes(b"---\ntitle: [unclosed\n---\nbody\n")
    latin1 = vault / "user/Latin.md"
    latin1.write_bytes("café".encode("latin-1"))
    report = memory.doctor()
    errors = {d.path: d.error for d in report.damaged}
    assert set(errors) == {"user/Broken.md", "user/Latin.md"}
    assert "YAML" in errors["user/Broken.md"] and "UTF-8" in errors["user/Latin.md"]
    with pytest.raises(DamagedNote):
        memory.write("Broken", observations=["[a] overwrite attempt"], overwrite=True)
    assert broken.read_bytes() == b"---\ntitle: [unclosed\n---\nbody\n"
    assert latin1.read_bytes() == "café".encode("latin-1")
    assert memory.search("still works")[0].title == "Fine"
    with pytest.raises(DamagedNote):
        memory.read("user/Broken.md")


def test_reindex_gives_the_same_results(memory: Memory, isolated_home: Path) -> None:
    for i in range(30):
        memory.write(
            f"笔记 {i} note", tags=[f"t{i % 3}"], observations=[f"[fact] 第 {i} 条 record number {i}"]
        )
    queries = ["笔记", "record", "第 1", "note 7", "t1"]
    before = [[h.to_dict() for h in memory.search(q, limit=50)] for q in queries]
    index_file = memory.index_path
    memory.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    with Memory.open(memory.vault, home=isolated_home) as fresh:
        fresh.refresh()
        assert [[h.to_dict() for h in fresh.search(q, limit=50)] for q in queries] == before
        report = fresh.reindex()
        assert report.added == 30
        assert [[h.to_dict() for h in fresh.search(q, limit=50)] for q in queries] == before


def test_refresh_parses_only_changed_files(memory: Memory, vault: Path) -> None:
    notes = [memory.write(f"n{i}", observations=[f"[a] v{i}"]) for i in range(5)]
    past = time.time_ns() - 10 * 10**9  # out of the window in which a fresh mtime is not trusted
    for note in notes:
        os.utime(vault / note.path, ns=(past, past))
    memory.refresh()
    assert memory.refresh().unchanged == 5
    path = vault / notes[0].path
    path.write_text(path.read_text(encoding="utf-8") + "- [a] extra\n", encoding="utf-8")
    bump_mtime(path)
    os.utime(vault / notes[1].path)  # touched, same bytes
    report = memory.refresh()
    assert (report.updated, report.unchanged, report.added) == (1, 4, 0)


def test_a_rewrite_within_a_fresh_files_mtime_tick_is_still_seen(memory: Memory, vault: Path) -> None:
    # A file system that keeps whole seconds gives a rewrite within the same second the same mtime;
    # with the same size, only hashing the file again can tell.
    note = memory.write("Tick", observations=["[a] alpha"])
    path = vault / note.path
    tick = (time.time_ns() // 10**9 + 1) * 10**9
    os.utime(path, ns=(tick, tick))
    memory.refresh()
    path.write_text(path.read_text(encoding="utf-8").replace("alpha", "omega"), encoding="utf-8")
    os.utime(path, ns=(tick, tick))
    assert [h.permalink for h in memory.search("omega")] == [note.permalink]
    assert memory.search("alpha") == []


def test_a_fresh_mtime_is_distrusted_for_longer_when_it_has_no_sub_second_digits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.memory import _trusted_mtime
    from cairn.vault import FileStat

    now = 1_800_000_000
    monkeypatch.setattr(time, "time", lambda: float(now))
    cases = {
        (now - 1) * 10**9: -1,  # whole seconds: FAT or a network drive; the tick may not be over
        (now - 3) * 10**9: (now - 3) * 10**9,
        now * 10**9 - 50_000_000: -1,  # 50 ms ago, on a file system with finer stamps
        now * 10**9 - 500_000_000: now * 10**9 - 500_000_000,
    }
    assert {ns: _trusted_mtime(FileStat("user/a.md", 1, ns)) for ns in cases} == cases


def test_unchanged_note_keeps_its_bytes_through_reads_and_searches(memory: Memory, vault: Path) -> None:
    hand = "---\ntitle: Hand\nweird_field:   {b: 1, a: 2}   # a comment\n---\n\n- [x] done item\n- [k] value"
    (vault / "user/Hand.md").write_text(hand, encoding="utf-8")
    memory.search("value")
    memory.reindex()
    assert memory.read("Hand").text == hand
    assert (vault / "user/Hand.md").read_text(encoding="utf-8") == hand
    appended = memory.append("Hand", "[k] more")
    assert "weird_field:   {b: 1, a: 2}   # a comment\n" in appended.text


def test_scopes_are_separate_folders_and_checked(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home, scope="agent:bot", allow_scopes=["agent:bot"]) as bot:
        note = bot.write("Bot fact", observations=["[a] bot only"])
        assert note.path.startswith("agent-bot/")
        with pytest.raises(ScopeDenied):
            bot.search("anything", scope="user")
        with pytest.raises(ScopeDenied):
            bot.write("x", scope="user")
    with Memory.open(vault, home=isolated_home, allow_scopes=["user", "agent:bot"]) as user:
        assert user.search("bot only") == []
        assert user.search("bot only", scope=["user", "agent:bot"])[0].scope == "agent:bot"


def test_a_vault_allow_list_confines_a_caller_that_names_no_scope(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as owner:
        owner.write("Private diary", observations=["[fact] plans for the walrus"])
    (vault / "cairn.toml").write_text('allow_scopes = ["agent:bot"]\n', encoding="utf-8")
    with Memory.open(vault, home=isolated_home) as confined:
        assert (confined.scope, confined.allow_scopes) == ("agent:bot", ("agent:bot",))
        assert confined.search("walrus") == []
        with pytest.raises(ScopeDenied):
            confined.search("walrus", scope="user")
        assert confined.write("Bot note").path.startswith("agent-bot/")
    result = CliRunner().invoke(app, ["search", "walrus"], env={"CAIRN_VAULT": str(vault)})
    assert "walrus" not in result.output


def test_vault_reports_cover_only_the_scopes_a_caller_may_touch(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home, allow_scopes=["user", "agent:bot"]) as owner:
        owner.write("Diary", observations=["[fact] private"])
        owner.write("Bot note", scope="agent:bot", observations=["[fact] shared"])
        owner.write("Bot trash", scope="agent:bot")
        owner.delete("Bot trash", scope="agent:bot")
    (vault / "user/Therapy notes.md").write_text("---\ntitle: [broken\n---\n", encoding="utf-8")
    with Memory.open(vault, home=isolated_home, scope="agent:bot", allow_scopes=["agent:bot"]) as bot:
        report = bot.doctor()
        assert (report.notes, report.damaged, report.trashed) == (1, (), 1)
        assert bot.status()["notes"] == 1 and bot.status()["damaged"] == 0
        assert "Therapy" not in str(bot.refresh())
    with Memory.open(vault, home=isolated_home) as owner:
        assert [d.path for d in owner.doctor().damaged] == ["user/Therapy notes.md"]


@pytest.mark.parametrize("scope", ["agent:bot\n", "agent:", "group:a/b", "workspace:" + "x" * 65])
def test_a_bad_scope_is_refused_before_anything_is_made(vault: Path, isolated_home: Path, scope: str) -> None:
    with pytest.raises(InvalidInput, match="invalid scope"):
        Memory.open(vault, home=isolated_home, scope=scope)
    assert not vault.exists()


@pytest.mark.parametrize("blocker", ["cairn.toml", "index"])
def test_a_folder_or_file_in_the_way_is_a_clear_error(vault: Path, isolated_home: Path, blocker: str) -> None:
    vault.mkdir(parents=True, exist_ok=True)
    isolated_home.mkdir(parents=True, exist_ok=True)
    if blocker == "cairn.toml":
        (vault / "cairn.toml").mkdir()
    else:
        (isolated_home / "index").write_text("not a folder", encoding="utf-8")
    with pytest.raises(InvalidInput, match="cannot"):
        Memory.open(vault, home=isolated_home)


def test_a_note_another_process_deletes_mid_search_is_left_out(
    memory: Memory, vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.index import Index

    memory.write("Alpha walrus", observations=["[fact] walrus"])
    gone = memory.write("Beta walrus", observations=["[fact] walrus walrus"])
    other = Memory.open(vault, home=isolated_home)  # its own connection, as another process has
    read_rows = Index._rows
    deleted: list[str] = []

    def rows_after_a_delete(self: Index, sql: str, params: list) -> list:
        if "WHERE n.id IN" in sql and not deleted:  # after ranking, before the rows are read
            deleted.append(other.delete(gone.permalink).permalink)
        return read_rows(self, sql, params)

    monkeypatch.setattr(Index, "_rows", rows_after_a_delete)
    assert [h.title for h in memory.search("walrus")] == ["Alpha walrus"]
    assert deleted == [gone.permalink]
    monkeypatch.undo()
    with pytest.raises(NotFound):
        memory.read(gone.permalink)
    other.close()


def test_context_follows_relations_and_forward_references(memory: Memory) -> None:
    course = memory.write("数据结构", relations=["belongs_to [[课表]]", "taught_by [[邓老师]]"])
    context = memory.context(f"memory://{course.permalink}")
    assert {r.target for r in context.unresolved} == {"课表", "邓老师"}
    table = memory.write("课表", relations=["includes [[线性代数]]"])
    memory.write("线性代数")
    context = memory.context(f"memory://{course.permalink}", depth=2)
    reached = {(n.note.title, n.depth, n.via) for n in context.related}
    assert ("课表", 1, "belongs_to") in reached and ("线性代数", 2, "includes") in reached
    assert [r.target for r in context.unresolved] == ["邓老师"]
    back = memory.context(f"memory://{table.permalink}")
    assert ("数据结构", "belongs_to") in {(n.note.title, n.via) for n in back.related}
    wildcard = memory.context("memory://数据*", depth=0)
    assert [n.title for n in wildcard.primary] == ["数据结构"]
    with pytest.raises(NotFound):
        memory.context("memory://nothing-*")


def test_state_directory_may_not_live_in_the_vault(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="must not be inside the vault"):
        Memory.open(tmp_path / "v", home=tmp_path / "v" / ".state")


def test_reindex_gives_back_the_space_of_an_index_that_had_grown(
    memory: Memory, vault: Path, tmp_path: Path
) -> None:
    notes = [memory.write(f"Bulk {i}", body=f"filler {i} " * 2000) for i in range(60)]
    for note in notes[5:]:
        (vault / note.path).unlink()
    memory.refresh()
    grown = memory._index.db.execute("PRAGMA page_count").fetchone()[0]
    memory.reindex()
    after = memory._index.db.execute("PRAGMA page_count").fetchone()[0]
    with Memory.open(vault, home=tmp_path / "fresh") as fresh:
        fresh.refresh()
        built = fresh._index.db.execute("PRAGMA page_count").fetchone()[0]
    assert after <= built + 2 < grown / 2  # as small as a fresh build of the same files
    assert [h.title for h in memory.search("filler 3")][0] == "Bulk 3"


def test_two_schema_versions_keep_their_own_index_files(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CLI and an MCP server of different Cairn versions on one machine: neither rebuilds the
    other's index at every start."""
    from cairn import index

    resets: list[str] = []
    real_rebuild = index.Index._rebuild

    def counting_rebuild(self: index.Index) -> None:
        resets.append(self.path.name)
        real_rebuild(self)

    monkeypatch.setattr(index.Index, "_rebuild", counting_rebuild)
    current = index.SCHEMA_VERSION
    with Memory.open(vault, home=isolated_home, watch=False) as new:
        new.write("共享笔记", observations=["[k] 两个版本都能找到"])
        new_file = new.index_path
    monkeypatch.setattr(index, "SCHEMA_VERSION", "older/version")
    with Memory.open(vault, home=isolated_home, watch=False) as old:
        old_file = old.index_path
        assert [h.title for h in old.search("两个版本")] == ["共享笔记"]
    assert old_file != new_file and old_file.parent == new_file.parent
    assert resets == [new_file.name, old_file.name]  # each file built once, when it was new
    monkeypatch.setattr(index, "SCHEMA_VERSION", current)
    with Memory.open(vault, home=isolated_home, watch=False) as new:
        assert new.index_path == new_file
        assert [h.title for h in new.search("两个版本")] == ["共享笔记"]
    assert resets == [new_file.name, old_file.name] and old_file.exists()


def test_index_files_no_version_has_touched_for_a_month_are_removed(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import index

    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        mem.write("Note", observations=["[k] kept"])
        current, vault_id = mem.index_path, mem.index_path.name.split("-")[0]
    folder = current.parent
    legacy = folder / f"{vault_id}.sqlite"  # how versions before per-version files named it
    stale = folder / f"{vault_id}-0ld0ld00.sqlite"
    recent = folder / f"{vault_id}-1a2b3c4d.sqlite"
    other_vault = folder / "ffffffffffffffff-0ld0ld00.sqlite"
    month_ago = time.time() - index.STALE_INDEX_SECONDS - 3600
    for path in (legacy, stale, recent, other_vault):
        path.write_bytes(b"an index")
        Path(f"{path}-wal").write_bytes(b"its log")
    for path in (legacy, stale, other_vault):
        for part in (path, Path(f"{path}-wal")):
            os.utime(part, (month_ago, month_ago))
    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        assert [h.title for h in mem.search("kept")] == ["Note"]
    left = sorted(p.name for p in folder.iterdir())
    assert f"{legacy.name}-wal" not in left and f"{stale.name}-wal" not in left
    assert legacy.name not in left and stale.name not in left
    assert {recent.name, f"{recent.name}-wal", other_vault.name, current.name} <= set(left)


def test_reindex_rebuilds_in_place_for_other_processes(memory: Memory, isolated_home: Path) -> None:
    memory.write("Shared", observations=["[k] seen by both"])
    with Memory.open(memory.vault, home=isolated_home) as other:
        assert [h.title for h in other.search("seen")] == ["Shared"]
        inode = memory.index_path.stat().st_ino
        memory.reindex()
        assert memory.index_path.stat().st_ino == inode  # same file, not a new one beside a deleted one
        memory.write("Later", observations=["[k] seen after the rebuild"])
        assert sorted(h.title for h in other.search("seen")) == ["Later", "Shared"]


def test_a_corrupt_index_is_replaced(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("Survivor", observations=["[k] files are the truth"])
        index = mem.index_path
    index.write_bytes(b"not a database at all" * 100)
    Path(f"{index}-wal").unlink(missing_ok=True)
    with Memory.open(vault, home=isolated_home) as mem:
        assert [h.title for h in mem.search("truth")] == ["Survivor"]


def _note_many(mem: Memory) -> None:
    for i in range(200):
        mem.write(f"Filler {i}", observations=[f"[k] ordinary text number {i} about things"])
    mem.write("Survivor", observations=["[k] files are the truth"])


def _damaged_index(vault: Path, home: Path, table: str | None = None) -> None:
    """Fill the vault, then overwrite pages of its index with junk, keeping the header: SQLite still
    opens the file and finds the damage only when it reads one of those pages. ``table``: only that
    table's pages (SQLite's dbstat names each page's table); else every other page after the third."""
    with Memory.open(vault, home=home) as mem:
        _note_many(mem)
        mem._index.checkpoint()  # everything in the main file, none of it only in the WAL
        index = mem.index_path
    db = apsw.Connection(str(index))
    (page_size,) = db.execute("PRAGMA page_size").fetchone()
    (page_count,) = db.execute("PRAGMA page_count").fetchone()
    if table:
        pages = [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE name = ?", (table,))]
    else:
        pages = list(range(4, page_count + 1, 2))
    db.close()
    data = bytearray(index.read_bytes())
    for page in pages:
        data[(page - 1) * page_size : page * page_size] = b"\xde\xad" * (page_size // 2)
    index.write_bytes(bytes(data))


def test_an_index_damaged_inside_is_rebuilt_from_the_files(vault: Path, isolated_home: Path) -> None:
    _damaged_index(vault, isolated_home)
    with Memory.open(vault, home=isolated_home) as mem:
        assert [h.title for h in mem.search("truth")] == ["Survivor"]
        assert mem.status()["notes"] == 201


def test_damage_found_by_a_search_rebuilds_the_index_and_answers(vault: Path, isolated_home: Path) -> None:
    _damaged_index(vault, isolated_home, "notes_fts_data")  # opening reads notes, and succeeds
    with Memory.open(vault, home=isolated_home) as mem:
        assert [h.title for h in mem.search("truth")] == ["Survivor"]
        assert len(mem.search("ordinary", limit=300)) == 200


def test_damage_found_by_a_write_keeps_the_note_and_rebuilds_the_index(
    vault: Path, isolated_home: Path
) -> None:
    _damaged_index(vault, isolated_home, "notes_fts_data")  # opening reads notes, and succeeds
    with Memory.open(vault, home=isolated_home) as mem:
        note = mem.write("Newcomer", observations=["[k] written onto a damaged index"])
        assert (vault / note.path).is_file()
        assert [h.title for h in mem.search("damaged")] == ["Newcomer"]
        assert [h.title for h in mem.search("truth")] == ["Survivor"]
        edited = mem.edit(note.permalink, find="damaged", replace="mended")
        assert "mended" in (vault / edited.path).read_text(encoding="utf-8")
        assert [h.title for h in mem.search("mended")] == ["Newcomer"]


def test_a_permalink_or_title_held_by_two_files_lists_them_by_path(memory: Memory, vault: Path) -> None:
    folder = vault / "user" / "dup"
    folder.mkdir(parents=True)
    # Written (and so indexed) in the opposite order to their paths.
    for name in ("b-second.md", "a-first.md"):
        (folder / name).write_text(f"---\ntitle: Twin\npermalink: twin\n---\n\n{name}\n", encoding="utf-8")
        memory.refresh()
    for name in ("twin", "Twin"):  # by permalink, by title
        with pytest.raises(InvalidInput, match="names 2 notes: user/dup/a-first.md, user/dup/b-second.md"):
            memory.read(name)


class _RecordingDb:
    """Passes every statement to the index's connection and keeps the last one with its bindings."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db, self.last = db, ("", ())

    def execute(self, sql: str, bindings=()):  # type: ignore[no-untyped-def]
        self.last = (sql, bindings)
        return self.db.execute(sql, bindings)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.db, name)


def test_list_gives_the_newest_first_from_the_index_not_by_sorting_every_note(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamps = {"Zeta": "2026-03-01", "Alpha": "2026-01-01", "Beta": "2026-03-01"}
    stamps |= {f"Old {i}": "2025-01-01" for i in range(20)}
    for title, day in stamps.items():
        note = memory.write(title, observations=["[k] words"])
        path = vault / note.path
        text = path.read_text(encoding="utf-8").replace(note.modified, f"{day}T00:00:00+00:00")
        path.write_text(text, encoding="utf-8")
    recording = _RecordingDb(memory._index.db)
    monkeypatch.setattr(memory._index, "db", recording)
    assert [s.title for s in memory.list(limit=3)] == ["Beta", "Zeta", "Alpha"]  # ties: permalink
    sql, bindings = recording.last
    plan = " | ".join(row[3] for row in recording.db.execute(f"EXPLAIN QUERY PLAN {sql}", bindings))
    assert "notes_modified" in plan and "TEMP B-TREE FOR ORDER BY" not in plan, plan


def test_opening_waits_while_another_process_holds_the_index(vault: Path, isolated_home: Path) -> None:
    # Another process opening the index, or closing it with a checkpoint, holds it for a moment;
    # opening must wait for that lock as every later statement does, not fail on its first one.
    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("Lock holder", observations=["[fact] the index was busy 索引忙"])
        index_path = mem.index_path
    holder = hold_exclusively(index_path)
    released = threading.Event()

    def release() -> None:
        time.sleep(0.3)
        holder.execute("COMMIT")
        holder.close()
        released.set()

    threading.Thread(target=release).start()
    with Memory.open(vault, home=isolated_home) as mem:
        assert released.is_set()  # it did have to wait
        assert [h.title for h in mem.search("索引忙")] == ["Lock holder"]


_OPEN_AT_ONCE = """
import sys, time
from pathlib import Path
from cairn import Memory
vault, homes, start = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
for round in range(int(sys.argv[4])):
    at = start + 0.2 * round
    time.sleep(max(0.0, at - time.time() - 0.05))
    while time.time() < at:  # the last moments spun, not slept: sleeping wakes late and unevenly
        pass
    with Memory.open(vault, home=homes / str(round)) as mem:
        print(len(mem.search("needle 针", limit=50)))
"""


def test_processes_opening_a_new_index_at_once_all_open_it(vault: Path, isolated_home: Path) -> None:
    # Each makes the new index file its own way at the same moment: SQLite answers one switch to
    # WAL mode "busy" without waiting, and a schema made by one must not be wiped by another.
    # Ten new indexes in turn, as a collision is a matter of a millisecond.
    with Memory.open(vault, home=isolated_home / "first") as mem:
        for i in range(40):
            mem.write(f"Note {i}", observations=[f"[fact] needle {i} 针"])
    rounds, start = 10, time.time() + 1.5  # past every interpreter's start-up
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN_AT_ONCE, str(vault), str(isolated_home), str(start), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [run.communicate(timeout=60) for run in runs]
    assert [(out.split(), err) for out, err in results] == [(["40"] * rounds, "")] * 2


def test_a_schema_made_by_another_process_meanwhile_is_kept(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import index

    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("Indexed by the first", observations=["[fact] 第一个进程写的"])
        path = mem.index_path
    looks: list[str | None] = []
    real_look = index.Index._schema

    def first_look_too_early(self: index.Index) -> str | None:
        # This process looked before the other made the schema; every later look is real.
        looks.append(None if not looks else real_look(self))
        return looks[-1]

    monkeypatch.setattr(index.Index, "_schema", first_look_too_early)
    second = index.Index(path)
    assert len(looks) == 2  # it looked again under the lock
    assert second.count(("user",)) == 1
    second.close()


def test_an_index_held_past_the_wait_is_a_clear_error_and_loses_no_write(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import index

    monkeypatch.setattr(index, "BUSY_TIMEOUT_MS", 200)
    with Memory.open(vault, home=isolated_home) as mem:
        settle(mem, [vault / mem.write("Before the lock", observations=["[fact] written first"]).path])
        index_path = mem.index_path
        holder = apsw.Connection(str(index_path))
        # Another process's write transaction: this one may still read, but not write, the index.
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE meta SET value = value")
        note = mem.write("While it was held", observations=["[fact] 锁住时写下 kept anyway"])
        assert (vault / note.path).read_text(encoding="utf-8").count("锁住时写下") == 1
        holder.execute("COMMIT")
        assert [h.title for h in mem.search("锁住时写下")] == ["While it was held"]
    holder.close()
    # Held exclusively, even opening must wait, and then says why it gave up.
    holder = hold_exclusively(index_path)
    with pytest.raises(Busy, match="in use by another process"):
        Memory.open(vault, home=isolated_home)
    result = CliRunner().invoke(app, ["--vault", str(vault), "--home", str(isolated_home), "search", "first"])
    assert result.exit_code == Busy.exit_code
    assert "error: the index is in use by another process" in result.output
    assert "Traceback" not in result.output
    holder.close()


def test_a_reindex_leaves_other_readers_the_index_as_it_was(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        written = [mem.write(f"Kept {i}", observations=[f"[fact] 重建时 still found {i}"]) for i in range(30)]
        settle(mem, [vault / note.path for note in written])  # the reader below only reads
    seen_midway: list[int] = []
    with (
        Memory.open(vault, home=isolated_home) as rebuilding,
        Memory.open(vault, home=isolated_home) as reader,
    ):

        def midway(done: int, total: int) -> None:
            if done == total // 2:
                seen_midway.append(len(reader.search("重建时", limit=50)))

        report = rebuilding.reindex(progress=midway)
        assert report.added == 30
        assert seen_midway == [30]  # not an empty index while the new one is built
        assert len(reader.search("重建时", limit=50)) == 30


def test_one_memory_serves_many_threads_at_once(memory: Memory) -> None:
    # The index's connections are opened without SQLite's own mutex: the Memory's lock alone keeps
    # two threads out of one connection, so a call that skipped it would show up here.
    def work(worker: int) -> list[str]:
        made: list[str] = []
        for i in range(12):
            note = memory.write(
                f"线程{worker} note {i}", observations=[f"[fact] worker{worker} wrote item{i} 第{i}条记录"]
            )
            made.append(note.permalink)
            memory.search(f"worker{worker} 记录", limit=5)
            memory.search(f"item{i}", granularity="line")
            memory.append(made[0], f"[note] seen by worker{worker} round{i}")
            memory.list(limit=3)
            memory.read(made[-1])
        return made

    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(work, range(4)))
    for worker, permalinks in enumerate(made):
        hits = memory.search(f"worker{worker}", limit=50)
        assert sorted(h.permalink for h in hits) == sorted(permalinks)
        assert len(memory.read(permalinks[0]).observations) == 1 + 12
    report = memory.doctor()
    assert report.notes == 48 and not report.damaged
