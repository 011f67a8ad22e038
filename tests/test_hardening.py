"""Hostile files, symbolic links, a second writer, an unwritable index (issue 38; issue 33's bugs
on the write side). Two processes, and a shell appender, are real processes here."""

from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from cairn import Memory
from cairn.errors import (
    AlreadyExists,
    FolderUnwritable,
    IndexUnavailable,
    InvalidInput,
    NotFound,
    ScopeDenied,
    SecretRefused,
)

NOTE = "---\ntitle: {t}\n---\n# {t}\n\n## Observations\n- [fact] {b}\n"


# -- symbolic links ---------------------------------------------------------------------------


def test_a_link_in_the_trash_is_never_restored(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(
        "---\ntitle: Secret\npermalink: secret-1\n---\n# Secret\noutside text\n", encoding="utf-8"
    )
    trash = memory.vault / "user" / ".trash"
    trash.mkdir(parents=True)
    (trash / "Secret.md").symlink_to(outside)
    with pytest.raises(NotFound):
        memory.restore("secret-1")
    assert not (memory.vault / "user" / "Secret.md").exists()
    assert outside.exists()
    assert memory.doctor().trashed == 0


def test_a_trash_folder_that_is_a_link_never_costs_an_outside_file(memory: Memory, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    original = elsewhere / "Kept.md"
    original.write_text("---\ntitle: Kept\npermalink: kept-1\n---\n# Kept\n", encoding="utf-8")
    memory.write("Anchor")  # makes user/
    (memory.vault / "user" / ".trash").symlink_to(elsewhere)
    with pytest.raises(NotFound):
        memory.restore("kept-1")
    assert original.exists()
    note = memory.write("Doomed")
    with pytest.raises(InvalidInput, match="symbolic link"):
        memory.delete(note.permalink)
    assert (memory.vault / note.path).exists() and sorted(os.listdir(elsewhere)) == ["Kept.md"]


def test_a_note_swapped_for_a_link_is_never_read_through_it(memory: Memory, tmp_path: Path) -> None:
    note = memory.write("Swapped", observations=["[fact] inside words"])
    outside = tmp_path / "outside.md"
    outside.write_text(NOTE.format(t="Swapped", b="zebraoutside"), encoding="utf-8")
    path = memory.vault / note.path
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(NotFound, match="symbolic link|no longer"):
        memory.read(note.path)
    assert memory.search("zebraoutside") == []
    folder = memory.vault / "user" / "sub"
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "x.md").write_text(NOTE.format(t="X", b="giraffeoutside"), encoding="utf-8")
    folder.symlink_to(tmp_path / "outdir")
    assert memory.search("giraffeoutside") == []


def test_a_file_swapped_for_a_link_after_the_scan_is_not_read(
    vault: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import importlib.util

    from cairn import vault as vault_module

    memory = Memory.open(vault, home=isolated_home, watch=False)  # every call scans
    memory.write("Anchor")
    path = memory.vault / "user" / "Raced.md"
    path.write_text(NOTE.format(t="Raced", b="inside"), encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text(NOTE.format(t="Raced", b="okapioutside"), encoding="utf-8")
    real_scan = vault_module.scan_notes

    def scan_then_swap(vault: Path) -> dict[str, tuple[int, int]]:
        found = real_scan(vault)
        if path.is_file() and not path.is_symlink():  # swapped between the scan and the read
            path.unlink()
            path.symlink_to(outside)
        return found

    where = "cairn.freshness" if importlib.util.find_spec("cairn.freshness") else "cairn.memory"
    monkeypatch.setattr(importlib.import_module(where), "scan_notes", scan_then_swap)
    with memory:
        assert memory.search("okapioutside") == []


# -- a second writer --------------------------------------------------------------------------


def _append_many(vault: str, home: str, permalink: str, tag: str, count: int) -> None:
    with Memory.open(vault, home=home, watch=False) as mem:
        for i in range(count):
            mem.append(permalink, f"[fact] {tag} line {i}")


def test_two_homes_on_one_vault_lose_no_append(vault: Path, tmp_path: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        permalink = mem.write("Shared").permalink
    ctx = multiprocessing.get_context("spawn")
    workers = [
        ctx.Process(
            target=_append_many, args=(str(vault), str(tmp_path / f"home{n}"), permalink, f"w{n}", 200)
        )
        for n in (1, 2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    text = (vault / "user" / "Shared.md").read_text(encoding="utf-8")
    for n in (1, 2):
        assert sum(f"w{n} line" in line for line in text.splitlines()) == 200


def test_an_external_appender_loses_no_line(memory: Memory) -> None:
    note = memory.write("Busy note")
    path = memory.vault / note.path
    appender = subprocess.Popen(
        ["sh", "-c", f'for i in $(seq 1 200); do echo "- [ext] outside $i" >> "{path}"; done'],
    )
    appended = 0
    while appender.poll() is None or appended < 20:
        memory.append(note.permalink, f"[fact] cairn {appended}")
        appended += 1
    appender.wait(60)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sorted(int(x.rsplit(" ", 1)[1]) for x in lines if "[ext] outside" in x) == list(range(1, 201))
    assert sum("[fact] cairn" in x for x in lines) == appended


def test_the_write_lock_lives_with_the_vault_and_is_no_note(memory: Memory) -> None:
    memory.write("One")
    lock = memory.vault / ".cairn" / "write.lock"
    assert lock.is_file()
    assert [h.path for h in memory.search("lock")] == []
    assert memory.status()["notes"] == 1


# -- the index --------------------------------------------------------------------------------


def test_an_index_path_that_is_a_folder_is_one_clear_error(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        path = mem.index_path
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.mkdir()
    with pytest.raises(IndexUnavailable, match="is a folder"):
        Memory.open(vault, home=isolated_home)


def _as_nobody(scenario, *args):  # type: ignore[no-untyped-def]
    """Run ``scenario`` in a forked child that dropped root for ``nobody``; its result or error text."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()

    def run() -> None:
        os.setgid(65534)
        os.setuid(65534)
        try:
            child.send(("ok", scenario(*args)))
        except Exception as exc:  # the test asserts on it
            child.send(("error", f"{type(exc).__name__}: {exc}"))

    process = ctx.Process(target=run)
    process.start()
    process.join(60)
    return parent.recv()


def _shared_dir(tmp_path: Path) -> Path:
    import tempfile

    place = Path(tempfile.mkdtemp(prefix="cairn-nobody-"))
    place.chmod(0o777)
    return place


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody")
def test_a_read_only_index_as_a_user_changes_nothing_and_recovers(tmp_path: Path) -> None:
    import cairn.guard  # noqa: F401 - loaded before the child drops root (the interpreter lives under /root)
    import cairn.markdown  # noqa: F401

    place = _shared_dir(tmp_path)

    def scenario() -> list[str]:
        seen = []
        with Memory.open(place / "vault", home=place / "home", origin="t") as mem:
            mem.write("First")
            index_path = mem.index_path
        index_path.chmod(0o444)
        try:
            with Memory.open(place / "vault", home=place / "home", origin="t") as mem:
                mem.write("Second")
        except IndexUnavailable as exc:
            seen.append(exc.message)
        seen.append(str((place / "vault" / "user" / "Second.md").exists()))
        index_path.chmod(0o600)  # writable again: it recovers by itself
        with Memory.open(place / "vault", home=place / "home", origin="t") as mem:
            seen.append(mem.write("Third").path)
            seen.append(str(len(mem.search("third first"))))
        return seen

    try:
        kind, result = _as_nobody(scenario)
    finally:
        subprocess.run(["rm", "-rf", str(place)], check=False)
    assert kind == "ok", result
    assert "cannot use the index" in result[0] and "nothing was written" in result[0]
    assert result[1:] == ["False", "user/Third.md", "2"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody")
def test_a_read_only_folder_is_one_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    import cairn.guard  # noqa: F401
    import cairn.markdown  # noqa: F401

    place = _shared_dir(tmp_path)

    def scenario() -> list[str]:
        with Memory.open(place / "vault", home=place / "home", origin="t") as mem:
            mem.write("First")
            folder = place / "vault" / "user"
            folder.chmod(0o555)
            try:
                mem.write("Second")
                return ["written"]
            except FolderUnwritable as exc:
                return [exc.message, *sorted(os.listdir(folder))]

    try:
        kind, result = _as_nobody(scenario)
    finally:
        subprocess.run(["rm", "-rf", str(place)], check=False)
    assert kind == "ok", result
    assert result[0].startswith("cannot write in ") and "permission denied" in result[0]
    assert result[1:] == ["First.md"]


def test_a_read_only_shm_left_behind_is_mended(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("First")
        path = mem.index_path
    shm = Path(f"{path}-shm")
    shm.touch()
    shm.chmod(0o444)  # as SQLite leaves it beside an index that was read-only
    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("Second")
        assert stat.S_IMODE(shm.stat().st_mode) == 0o600


def test_state_folder_and_index_files_are_private(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        mem.write("First")
        path = mem.index_path
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{path}{suffix}")
            if part.exists():
                assert stat.S_IMODE(part.stat().st_mode) == 0o600, part


def test_a_search_during_another_process_s_long_write_reads_the_old_index(
    vault: Path, isolated_home: Path
) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        note = mem.write("Old words", observations=["[fact] apricot"])
        holder = apsw.Connection(str(mem.index_path))
        holder.execute("BEGIN IMMEDIATE")  # as a reindex holds it
        (vault / note.path).write_text(NOTE.format(t="Old words", b="apricot and banana"), encoding="utf-8")
        start = time.monotonic()
        assert [h.title for h in mem.search("apricot")] == ["Old words"]
        assert time.monotonic() - start < 5
        holder.execute("ROLLBACK")
        assert [h.title for h in mem.search("banana")] == ["Old words"]  # caught up once free
        holder.close()


# -- smaller things ---------------------------------------------------------------------------


def test_an_interrupted_delete_is_settled_and_named(memory: Memory) -> None:
    note = memory.write("Half deleted", observations=["[fact] still here"])
    from cairn import markdown

    trash = memory.vault / "user" / ".trash"
    trash.mkdir()
    copy = markdown.set_fields(note.text, {"deleted": "2026-01-01T00:00:00+00:00"})
    (trash / "Half deleted.md").write_text(copy, encoding="utf-8")
    report = memory.doctor()
    assert any("interrupted delete" in w.error for w in report.warnings)
    assert not (trash / "Half deleted.md").exists()
    assert memory.read(note.permalink).path == note.path


def test_stale_temp_files_are_removed_at_the_next_write(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as memory:
        memory.write("First")
    folder = vault / "user"
    old = folder / ".First.md.deadbeef.tmp"  # left by a write killed midway
    fresh = folder / ".First.md.cafebabe.tmp"  # perhaps a write under way right now
    old.write_bytes(b"x")
    fresh.write_bytes(b"y")
    os.utime(old, (time.time() - 120, time.time() - 120))
    with Memory.open(vault, home=isolated_home) as memory:  # the next command
        memory.write("Second")
    assert not old.exists() and fresh.exists()


def test_refresh_sees_a_change_that_kept_size_and_mtime(memory: Memory) -> None:
    note = memory.write("Same size", observations=["[fact] aaaaa"])
    path = memory.vault / note.path
    os.utime(path, ns=(path.stat().st_mtime_ns - 10**10,) * 2)
    memory.refresh()
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"aaaaa", b"bbbbb"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert memory.search("bbbbb") == []  # a plain call trusts size and mtime
    assert memory.refresh().updated == 1
    assert [h.title for h in memory.search("bbbbb")] == ["Same size"]


def test_reads_refuse_a_scope_with_trailing_space(memory: Memory) -> None:
    memory.write("One")
    with pytest.raises((InvalidInput, ScopeDenied)):
        memory.search("one", scope="user ")
    with pytest.raises((InvalidInput, ScopeDenied)):
        memory.list(scope="user ")


def test_a_huge_hand_written_note_is_indexed_in_part_and_doctor_says_so(memory: Memory) -> None:
    from cairn import records

    memory.write("Small")
    big = memory.vault / "user" / "Big.md"
    line = "filler words " * 8 + "\n"
    big.write_text(
        "# Big\n\nmarmalade first\n" + line * (records.MAX_INDEXED_BYTES // len(line) + 100) + "quince last\n"
    )
    assert [h.title for h in memory.search("marmalade")] == ["Big"]
    assert memory.search("quince") == []
    assert any(w.path == "user/Big.md" and "indexed" in w.error for w in memory.doctor().warnings)


def test_folder_and_type_go_through_the_secret_check(memory: Memory) -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(SecretRefused):
        memory.write("Folder", folder=key)
    with pytest.raises(SecretRefused):
        memory.write("Type", type=key)
    assert not any((memory.vault / "user").glob("**/*.md")) if (memory.vault / "user").exists() else True


def test_delete_says_where_the_file_went(memory: Memory) -> None:
    note = memory.write("Gone soon")
    deleted = memory.delete(note.permalink)
    assert deleted.path == "user/.trash/Gone soon.md" and (memory.vault / deleted.path).is_file()
    assert deleted.permalink == note.permalink


def test_a_hand_written_note_gets_its_permalink_at_the_first_write(memory: Memory) -> None:
    path = memory.vault / "user" / "Hand.md"
    path.write_text("# Hand\n\n## Observations\n- [fact] typed by hand\n", encoding="utf-8")
    permalink = memory.read("user/Hand.md").permalink
    memory.append(permalink, "[fact] added by Cairn")
    path.rename(path.with_name("Renamed.md"))
    assert memory.read(permalink).path == "user/Renamed.md"


def test_restore_brings_back_the_newest_copy_once(memory: Memory) -> None:
    first = memory.write("Twice", observations=["[fact] older copy"])
    memory.delete(first.permalink)
    again = memory.write("Twice", observations=["[fact] newer copy"])
    assert again.permalink == first.permalink
    memory.delete(again.permalink)
    restored = memory.restore(first.permalink)
    assert [o.content for o in restored.observations] == ["newer copy"]
    assert any("older cop" in n for n in restored.notices)
    with pytest.raises(AlreadyExists, match="in the vault already"):
        memory.restore(first.permalink)
    assert [h.title for h in memory.search("Twice")] == ["Twice"]


def test_reads_of_a_missing_vault_create_nothing(tmp_path: Path, isolated_home: Path) -> None:
    missing = tmp_path / "typo" / "vault"
    with Memory.open(missing, home=isolated_home, create=False) as mem:
        for call in (mem.search, mem.status, mem.list, mem.doctor):
            with pytest.raises(NotFound, match="no vault at .*cairn --vault .* init"):
                call()  # type: ignore[operator]
        assert not missing.exists() and not missing.parent.exists()
        mem.write("First")  # a write makes it
    assert (missing / "user" / "First.md").is_file()


def test_status_counts_unnamed_files_and_says_how_it_stays_fresh(memory: Memory) -> None:
    memory.write("One")
    (memory.vault / "user" / os.fsdecode(b"caf\xe9.md")).write_bytes(b"# x\n")
    status = memory.status()
    assert status["damaged"] == len(memory.doctor().damaged) == 1
    assert status["freshness_now"] in ("scan", "inotify") and status["freshness_why"]
    if sys.platform.startswith("linux"):
        assert status["freshness"] == "inotify"


def _chattr(flag: str, path: Path) -> bool:
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def test_an_immutable_folder_is_one_clear_error_and_leaves_nothing(memory: Memory) -> None:
    memory.write("First")
    folder = memory.vault / "user"
    if not _chattr("+i", folder):
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE or a file system without it)")
    try:
        with pytest.raises(FolderUnwritable, match=r"cannot write in .*user: the folder is immutable"):
            memory.write("Second")
        assert sorted(os.listdir(folder)) == ["First.md"]
    finally:
        _chattr("-i", folder)
    assert memory.write("Second").path == "user/Second.md"


def test_an_immutable_index_changes_nothing_and_recovers(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as memory:
        memory.write("First")
        path = memory.index_path
    if not _chattr("+i", path):
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE or a file system without it)")
    try:
        with (
            pytest.raises(IndexUnavailable, match="cannot use the index"),
            Memory.open(vault, home=isolated_home) as memory,
        ):
            memory.write("Second")
        assert not (vault / "user" / "Second.md").exists()
    finally:
        _chattr("-i", path)
    with Memory.open(vault, home=isolated_home) as memory:
        assert memory.write("Second").path == "user/Second.md"
        assert sorted(h.title for h in memory.search("first second")) == ["First", "Second"]


def test_an_edit_is_applied_again_to_a_file_changed_under_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import fileio

    note = memory.write("Raced edit", observations=["[fact] alpha", "[fact] beta"])
    path = memory.vault / note.path
    real_unchanged = fileio.unchanged
    appended: list[bool] = []

    def changed_once(vault: Path, base: fileio.Base | None) -> bool:
        if not appended:  # another program appends between Cairn's read and its rename
            appended.append(True)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("- [ext] gamma\n")
        return real_unchanged(vault, base)

    monkeypatch.setattr(fileio, "unchanged", changed_once)
    memory.edit(note.permalink, "alpha", "ALPHA")
    text = path.read_text(encoding="utf-8")
    assert "ALPHA" in text and "gamma" in text and "alpha" not in text
    appended.clear()

    def removed_once(vault: Path, base: fileio.Base | None) -> bool:
        if not appended:
            appended.append(True)
            path.write_text(
                path.read_text(encoding="utf-8").replace("beta", "BETA by hand"), encoding="utf-8"
            )
        return real_unchanged(vault, base)

    monkeypatch.setattr(fileio, "unchanged", removed_once)
    from cairn.errors import Conflict

    with pytest.raises(Conflict, match="no longer applies"):
        memory.edit(note.permalink, "beta", "b")
    assert "BETA by hand" in path.read_text(encoding="utf-8")


def test_a_full_disk_is_one_clear_error_and_leaves_nothing(tmp_path: Path, isolated_home: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root, or no CAP_SYS_ADMIN)")
    try:
        with Memory.open(disk / "vault", home=isolated_home) as memory:
            memory.write("First")
            fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
            with pytest.raises(OSError):
                while True:
                    os.write(fd, b"x" * 4096)
            os.close(fd)
            with pytest.raises(FolderUnwritable, match="the disk is full; nothing was written"):
                memory.write("Second", body="text " * 2000)
            assert sorted(os.listdir(disk / "vault" / "user")) == ["First.md"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_the_trash_lists_deleted_notes_newest_first(memory: Memory, tmp_path: Path) -> None:
    first = memory.write("First gone")
    second = memory.write("Second gone")
    memory.delete(first.permalink, reason="old")
    time.sleep(1.1)  # deletion times are kept to the second
    memory.delete(second.permalink)
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    (memory.vault / "user" / ".trash" / "Linked.md").symlink_to(tmp_path / "outside.md")
    listed = memory.trash()
    assert [(n.title, n.path) for n in listed] == [
        ("Second gone", "user/.trash/Second gone.md"),
        ("First gone", "user/.trash/First gone.md"),
    ]
    assert listed[1].frontmatter["deleted_reason"] == "old"
