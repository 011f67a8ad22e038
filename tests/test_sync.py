"""Sync of vaults with one remote (cairn.sync): pull, push, merge, conflicts, the outbox, faults.

The remote here is a folder (``file://``, the LocalStore); test_sync_servers.py runs the races
against real WebDAV and S3 servers.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from cairn import Memory
from cairn.errors import InvalidInput
from cairn.stores import AuthFailed, Unreachable
from sync_helpers import observations, open_vault


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    folder = tmp_path / "remote"
    folder.mkdir()
    return folder


@pytest.fixture
def url(remote: Path) -> str:
    return remote.as_uri()


def test_a_note_written_in_one_vault_is_on_the_remote_at_once_and_pulled_by_another(
    tmp_path: Path, remote: Path, url: str
) -> None:
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        note = a.write("数据结构（2026 秋）", observations=["[teacher] 邓俊辉"])
        assert (remote / note.path).read_bytes() == (a.vault / note.path).read_bytes()  # read-your-writes
        report = b.sync()
        assert report.pulled == [note.path]
        assert [h.permalink for h in b.search("邓俊辉")] == [note.permalink]


def test_appends_on_two_vaults_to_one_note_are_merged_on_every_side(tmp_path: Path, url: str) -> None:
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        note = a.write("Course", observations=["[teacher] Deng"])
        b.sync()
        # b appends while a appends: b's push finds a's version and merges both additions.
        a_note = a.append(note.permalink, "[room] third building")
        b_note = b.append(note.permalink, "[deadline] week two")
        assert a_note and b_note
        a.sync()
        for mem in (a, b):
            lines = observations(mem.vault, note.path)
            assert sorted(lines) == ["- [deadline] week two", "- [room] third building", "- [teacher] Deng"]
            assert not (mem.vault / ".conflict").exists()


def test_the_same_line_edited_on_two_vaults_keeps_ours_and_a_whole_conflict_copy(
    tmp_path: Path, remote: Path, url: str
) -> None:
    with open_vault(tmp_path, "a", url) as a:
        note = a.write("Plan", observations=["[when] Monday"])
    with open_vault(tmp_path, "b", url) as b:
        pass
    with open_vault(tmp_path, "a", url) as a:
        a.edit(note.permalink, "Monday", "Tuesday")
    remote_text = (remote / note.path).read_text(encoding="utf-8")
    with open_vault(tmp_path, "b", url) as b:  # opening syncs: b's copy is unchanged, so it pulls
        assert "Tuesday" in (b.vault / note.path).read_text(encoding="utf-8")
    # now both edit the line without seeing each other: b pushes last
    mem_b_vault = tmp_path / "vault-b"
    (mem_b_vault / note.path).write_text(remote_text.replace("Tuesday", "Friday"), encoding="utf-8")
    with open_vault(tmp_path, "a", url) as a:
        a.edit(note.permalink, "Tuesday", "Wednesday")
    with open_vault(tmp_path, "b", url) as b:
        status = b.sync_status()
    assert "Friday" in (remote / note.path).read_text(encoding="utf-8")  # ours (b) wins
    assert status is not None and len(status["conflicts"]) == 1
    copy = mem_b_vault / status["conflicts"][0]
    assert status["conflicts"][0].startswith(".conflict/user/Plan__a__")
    assert "Wednesday" in copy.read_text(encoding="utf-8")  # the remote's version, whole
    with open_vault(tmp_path, "b", url) as b:
        assert [h.path for h in b.search("Wednesday")] == []  # a conflict copy is never a live note
        assert [h.path for h in b.search("Friday")] == [note.path]


def test_a_delete_racing_an_edit_keeps_the_edit(tmp_path: Path, url: str) -> None:
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        note = a.write("Doomed", observations=["[fact] one"])
        b.sync()
        (b.vault / note.path).write_text(
            (b.vault / note.path).read_text(encoding="utf-8") + "- [fact] kept edit\n", encoding="utf-8"
        )
        a.delete(note.permalink)  # pushed: the remote file is gone, the trash copy is there
        b.sync()  # b edited it: the edit goes back to the remote
        a.sync()
        for mem in (a, b):
            assert "- [fact] kept edit" in (mem.vault / note.path).read_text(encoding="utf-8")
        assert any((a.vault / "user" / ".trash").rglob("Doomed*.md"))


def test_a_delete_on_one_vault_reaches_the_other_when_it_did_not_edit(tmp_path: Path, url: str) -> None:
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        note = a.write("Gone", observations=["[fact] one"])
        b.sync()
        a.delete(note.permalink)
        report = b.sync()
        assert note.path in report.deleted and not (b.vault / note.path).exists()
        assert b.search("one") == [] and b.list(folder="") == []


def test_a_person_editing_the_remote_file_is_never_overwritten_unseen(
    tmp_path: Path, remote: Path, url: str
) -> None:
    with open_vault(tmp_path, "a", url) as a:
        note = a.write("Shared", observations=["[fact] one"])
        by_hand = (
            (remote / note.path).read_text(encoding="utf-8").replace("[fact] one", "[fact] one, by hand")
        )
        (remote / note.path).write_text(by_hand, encoding="utf-8")
        a.append(note.permalink, "[fact] two")  # its push meets the hand edit: no merge possible
        text = (remote / note.path).read_text(encoding="utf-8")
        conflicts = a.sync_status()["conflicts"]
    assert "- [fact] two" in text
    assert len(conflicts) == 1 and (a.vault / conflicts[0]).read_text(encoding="utf-8") == by_hand


def test_a_damaged_file_is_synced_byte_for_byte(tmp_path: Path, remote: Path, url: str) -> None:
    damaged = b"---\ntitle: [unclosed\n---\n\xff\xfe not utf-8\n"
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        (a.vault / "user" / "broken.md").write_bytes(damaged)
        a.sync()
        assert (remote / "user" / "broken.md").read_bytes() == damaged
        b.sync()
        assert (b.vault / "user" / "broken.md").read_bytes() == damaged
        (b.vault / "user" / "broken.md").write_bytes(damaged + b"b side\n")
        (a.vault / "user" / "broken.md").write_bytes(damaged + b"a side\n")
        a.sync()
        report = b.sync()  # both changed a file that is no note: b's wins, a's is kept whole
        assert (remote / "user" / "broken.md").read_bytes() == damaged + b"b side\n"
        assert [(b.vault / c).read_bytes() for c in report.conflicts] == [damaged + b"a side\n"]


def test_hand_edits_and_new_files_in_the_vault_are_pushed(tmp_path: Path, remote: Path, url: str) -> None:
    with open_vault(tmp_path, "a", url) as a:
        (a.vault / "user" / "hand.md").write_text(
            "---\ntitle: Hand\n---\n\n- [fact] typed\n", encoding="utf-8"
        )
        (a.vault / "user" / ".hand.md.abcd.tmp").write_bytes(b"half")  # an atomic write in flight
        report = a.sync()
        assert report.pushed == ["user/hand.md"]
        assert not (remote / "user" / ".hand.md.abcd.tmp").exists()
        again = a.sync()
        assert again.pushed == again.pulled == []


def test_an_unreachable_remote_queues_writes_and_the_outbox_drains_later(
    tmp_path: Path, remote: Path, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with open_vault(tmp_path, "a", url) as a:
        note = a.write("Trip", observations=["[fact] one"])
    offline = remote.rename(tmp_path / "unplugged")
    with caplog.at_level(logging.WARNING, logger="cairn.sync"), open_vault(tmp_path, "a", url) as a:
        a.append(note.permalink, "[fact] two")  # succeeds: the vault is the working copy
        a.append(note.permalink, "[fact] three")
        assert "queued in the outbox" in caplog.text
        assert a.sync_status()["outbox"] == 1  # one entry per file, in order
        with pytest.raises(Unreachable):
            a.sync()
        assert [h.permalink for h in a.search("three")] == [note.permalink]  # reads serve the vault
        outbox = sorted(os.listdir(a.home / "sync"))
        assert outbox
        offline.rename(remote)
        report = a.sync()
        assert report.pushed == [note.path] and report.outbox == 0
    assert "- [fact] three" in (remote / note.path).read_text(encoding="utf-8")


def test_a_refused_credential_stops_sync_with_one_line_saying_how_to_renew(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from cairn.stores import local

    def refuse(*args: object, **kwargs: object) -> None:
        raise AuthFailed("401 Unauthorized")

    with open_vault(tmp_path, "a", url) as a:
        monkeypatch.setattr(local.LocalStore, "list", refuse)
        with caplog.at_level(logging.WARNING, logger="cairn.sync"):
            note = a.write("Still works", observations=["[fact] local"])
        assert "cairn remote set" in caplog.text and "--password-stdin" in caplog.text
        assert len([r for r in caplog.records if r.name == "cairn.sync"]) == 1
        with pytest.raises(AuthFailed, match="renew it with cairn remote set .* --password-stdin"):
            a.sync()
        assert a.read(note.permalink).title == "Still works"


def test_an_interrupted_download_leaves_no_truncated_note(
    tmp_path: Path, remote: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.sync import syncer as syncer_module

    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        note = a.write("Whole", observations=["[fact] one"])
        b.sync()
        a.append(note.permalink, "[fact] two")
        before = (b.vault / note.path).read_bytes()
        real = syncer_module.atomic_write

        def crash(path: Path, data: bytes) -> None:
            real(path.parent / f".{path.name}.dead.tmp", data[: len(data) // 2])  # as a kill would leave it
            raise OSError("killed mid-write")

        monkeypatch.setattr(syncer_module, "atomic_write", crash)
        report = b.sync()
        assert report.failed and (b.vault / note.path).read_bytes() == before
        monkeypatch.setattr(syncer_module, "atomic_write", real)
        b.sync()
        assert "- [fact] two" in (b.vault / note.path).read_text(encoding="utf-8")
        assert b.doctor().damaged == ()


def test_sync_without_a_remote_says_how_to_attach_one(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="cairn remote set URL"):
        memory.sync()
    assert memory.sync_status() is None


def test_a_url_opens_a_mirror_vault_in_the_state_directory(
    tmp_path: Path, url: str, isolated_home: Path
) -> None:
    with open_vault(tmp_path, "a", url) as a:
        a.write("Mirrored", observations=["[fact] far"])
    with Memory.open(url, home=isolated_home, watch=False) as mirror:
        assert mirror.vault.parent == isolated_home / "mirrors"
        assert [h.title for h in mirror.search("far")] == ["Mirrored"]


def test_sync_interval_is_read_from_cairn_toml_and_a_stale_sync_runs_before_a_call(
    tmp_path: Path, remote: Path, url: str
) -> None:
    with open_vault(tmp_path, "a", url) as a, open_vault(tmp_path, "b", url) as b:
        (b.vault / "cairn.toml").write_text("sync_interval = 0\n", encoding="utf-8")
    with open_vault(tmp_path, "b", url) as b, open_vault(tmp_path, "a", url) as a:
        assert b.sync_status()["sync_interval"] == 0
        a.write("Fresh", observations=["[fact] news"])
        assert [h.title for h in b.search("news")] == ["Fresh"]  # b synced before searching
        assert a.sync_status()["sync_interval"] == 300


def test_bad_sync_interval_is_a_clear_error(tmp_path: Path, url: str) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "cairn.toml").write_text('sync_interval = "often"\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="sync_interval"):
        Memory.open(vault, watch=False)


def test_the_state_directory_holds_base_copies_and_the_vault_holds_no_sync_state(
    tmp_path: Path, remote: Path, url: str
) -> None:
    with open_vault(tmp_path, "a", url) as a:
        a.write("Base", observations=["[fact] b"])
        state = json.loads(next((a.home / "sync").glob("*/state.json")).read_text(encoding="utf-8"))
    assert list(state["files"]) == ["user/Base.md"]
    listed = sorted(p.relative_to(remote).as_posix() for p in remote.rglob("*") if p.is_file())
    assert listed == ["user/Base.md"]
