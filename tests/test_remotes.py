"""``cairn remote set|show|unset`` and ``cairn sync`` from the command line; where the remote
record lives (the state directory, 0600, never the vault) and how the environment overrides it."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.cli import app
from cairn.sync import remotes

runner = CliRunner()


def cairn(*args: str, input: str | None = None, code: int = 0):
    result = runner.invoke(app, list(args), input=input)
    assert result.exit_code == code, result.output
    return result


def test_remote_set_keeps_the_password_in_a_0600_record_outside_the_vault(
    tmp_path: Path, isolated_home: Path, vault: Path
) -> None:
    url = (tmp_path / "remote").as_uri()
    cairn("remote", "set", url, "--user", "bob", "--password-stdin", input="s3cret pass\n")
    record = isolated_home / "remotes" / f"{remotes.vault_id(vault.resolve())}.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert json.loads(record.read_text(encoding="utf-8"))["password"] == "s3cret pass"
    assert not any("s3cret" in p.read_text(errors="ignore") for p in vault.rglob("*") if p.is_file())
    shown = cairn("remote", "show", "--json").stdout
    data = json.loads(shown)
    assert data["url"] == url and data["user"] == "bob" and data["password"] == "****"
    assert "s3cret" not in shown
    # set again without a password: the saved one stays for the same URL
    cairn("remote", "set", url, "--user", "alice")
    assert remotes.load(isolated_home, vault.resolve()).password == "s3cret pass"
    cairn("remote", "unset")
    assert not record.exists()
    assert json.loads(cairn("remote", "show", "--json").stdout)["url"] is None


def test_the_environment_supplies_and_overrides_the_remote(
    tmp_path: Path, isolated_home: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cairn("remote", "set", (tmp_path / "a").as_uri(), "--user", "bob", "--token-stdin", input="tok\n")
    monkeypatch.setenv("CAIRN_REMOTE", "webdavs://dav.example.org/vault")
    monkeypatch.setenv("CAIRN_REMOTE_PASSWORD", "from-env")
    remote = remotes.load(isolated_home, vault.resolve())
    assert (remote.url, remote.user, remote.password, remote.token) == (
        "webdavs://dav.example.org/vault", "bob", "from-env", "tok"
    )


def test_a_bad_url_or_empty_stdin_is_one_clear_error(tmp_path: Path) -> None:
    result = cairn("remote", "set", "ftp://x/y", code=2)
    assert "webdav://" in result.output and "Traceback" not in result.output
    result = cairn("remote", "set", (tmp_path / "r").as_uri(), "--password-stdin", input="", code=2)
    assert "stdin held no credential" in result.output


def test_cairn_sync_json_reports_what_moved(tmp_path: Path, vault: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "user").mkdir()
    (remote / "user" / "From afar.md").write_text("---\ntitle: From afar\n---\n\n- [fact] far\n", encoding="utf-8")
    cairn("remote", "set", remote.as_uri())
    (vault / "user").mkdir(parents=True)
    (vault / "user" / "Here.md").write_text("---\ntitle: Here\n---\n\n- [fact] near\n", encoding="utf-8")
    data = json.loads(cairn("sync", "--json").stdout)
    assert data["pulled"] == ["user/From afar.md"] and data["pushed"] == ["user/Here.md"]
    assert set(data) >= {"pulled", "pushed", "deleted", "conflicts", "outbox", "requests"}
    assert (remote / "user" / "Here.md").exists()
    hits = json.loads(cairn("search", "far", "--json").stdout)
    assert [h["title"] for h in (hits["hits"] if isinstance(hits, dict) else hits)] == ["From afar"]


def test_cairn_sync_on_an_unreachable_remote_fails_saying_what_waits(tmp_path: Path, vault: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    cairn("remote", "set", remote.as_uri())
    cairn("write", "Note", "--obs", "[fact] one")
    remote.rename(tmp_path / "gone")
    cairn("append", "note", "[fact] two")  # succeeds: queued
    result = cairn("sync", code=15)
    assert "1 change(s) wait in the outbox" in result.output


def test_a_url_as_the_vault_opens_its_mirror(tmp_path: Path, isolated_home: Path) -> None:
    remote = tmp_path / "remote"
    (remote / "user").mkdir(parents=True)
    (remote / "user" / "Far.md").write_text("---\ntitle: Far\n---\n\n- [fact] mirrored\n", encoding="utf-8")
    out = cairn("--vault", remote.as_uri(), "search", "mirrored").stdout
    assert "Far" in out
    assert list((isolated_home / "mirrors").glob("*/user/Far.md"))


def test_status_shows_the_remote_and_outbox_and_doctor_names_conflict_copies(tmp_path: Path, vault: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    cairn("remote", "set", remote.as_uri())
    cairn("write", "Note", "--obs", "[fact] one")
    remote.rename(tmp_path / "gone")
    cairn("append", "note", "[fact] two")  # queued in the outbox
    status = json.loads(cairn("status", "--json").stdout)
    assert status["remote"] == remote.as_uri() and status["outbox"] == 1 and status["last_sync"]
    copy = vault / ".conflict" / "user" / "Note.md__laptop__20261204T101500.md"
    copy.parent.mkdir(parents=True)
    copy.write_text("---\ntitle: Note\n---\n\n- [fact] theirs\n", encoding="utf-8")
    report = json.loads(cairn("doctor", "--json").stdout)
    assert report["conflicts"] == [".conflict/user/Note.md__laptop__20261204T101500.md"]
    assert "conflict copy: .conflict/user/Note.md__laptop" in cairn("doctor").stdout
    assert "theirs" not in cairn("search", "theirs").stdout  # never a live note
