"""The ``cairn`` command line, through Typer's CliRunner and (a few) a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner, Result

import cairn
from cairn.cli import app, common
from cairn.errors import InvalidInput
from cairn.query_filters import parse_where

runner = CliRunner()
BIN = Path(sys.executable).parent


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A fresh vault and state dir; HOME points at a temp dir so the real ~ is never touched."""
    vault = tmp_path / "vault"
    home = tmp_path / "state"
    monkeypatch.setenv("CAIRN_VAULT", str(vault))
    monkeypatch.setenv("CAIRN_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return types.SimpleNamespace(root=tmp_path, vault=vault, home=home)


def run(*args: str, input: str | bytes | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def ok(*args: str, input: str | bytes | None = None) -> Result:
    result = run(*args, input=input)
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr, result.exception)
    return result


def ok_json(*args: str, input: str | bytes | None = None):
    return json.loads(ok(*args, "--json", input=input).stdout)


def failed(*args: str, code: int | None = None) -> Result:
    """Run a command that must fail cleanly: non-zero exit, an error line, no traceback."""
    result = run(*args)
    assert result.exit_code != 0, result.stdout
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def permalinks(hits_doc: dict) -> list[str]:
    return [h["permalink"] for h in hits_doc["hits"]]


def md_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*.md")} if root.exists() else set()


CJK_TITLE = "数据结构（2026 秋）"


def write_course(*extra: str) -> dict:
    return ok_json(
        "write",
        CJK_TITLE,
        "--type",
        "course",
        "--folder",
        "courses",
        "--tag",
        "课程",
        "--tag",
        "大二上",
        "--obs",
        "[teacher] 邓俊辉 #重要 (讲得快，坐前排)",
        "--obs",
        "[deadline] 大作业 12 月第 2 周截止",
        "--rel",
        "belongs_to [[我的课表 2026 秋]]",
        *extra,
    )


# -- write / read / search ------------------------------------------------------------------


def test_write_cjk_then_read_and_search(env):
    note = write_course()
    assert note["title"] == CJK_TITLE
    assert note["type"] == "course"
    assert note["tags"] == ["课程", "大二上"]
    path = env.vault / note["path"]
    assert path.is_file()
    assert path.resolve().is_relative_to((env.vault / "user").resolve())
    text = path.read_text(encoding="utf-8")
    assert "邓俊辉" in text and "[[我的课表 2026 秋]]" in text and note["permalink"] in text

    # read prints the file exactly as it is on disk
    assert ok("read", note["permalink"]).stdout_bytes == path.read_bytes()
    again = ok_json("read", note["permalink"])
    assert again["title"] == CJK_TITLE
    assert [o["category"] for o in again["observations"]] == ["teacher", "deadline"]
    assert again["relations"][0]["target"] == "我的课表 2026 秋"

    other = ok_json("write", "Python 索引设计", "--body", "用 SQLite FTS5 建立倒排索引，支持中文。")
    ok("write", "Cooking notes", "--body", "Pasta needs salt.")

    # a Chinese partial word finds the longer title; output is real UTF-8, not \u escapes
    result = ok("search", "数据", "--json")
    assert "数据结构" in result.stdout
    assert permalinks(json.loads(result.stdout))[0] == note["permalink"]
    hits = ok_json("search", "Python 索引")["hits"]
    assert hits and hits[0]["permalink"] == other["permalink"]
    assert {"permalink", "title", "path", "line", "snippet"} <= set(hits[0])
    assert ok_json("search", "邓俊辉")["hits"][0]["permalink"] == note["permalink"]
    assert ok_json("search", "不存在的词汇组合")["hits"] == []

    # plain text output (not a terminal) names the note and its location
    plain = ok("search", "数据").stdout
    assert CJK_TITLE in plain and f"{note['path']}:" in plain


def test_global_json_flag_and_list(env):
    note = write_course()
    ok("write", "Loose note", "--body", "nothing much")
    doc = json.loads(ok("--json", "search", "数据").stdout)
    assert permalinks(doc) == [note["permalink"]]
    listed = ok_json("list", "--folder", "courses")["notes"]
    assert [n["permalink"] for n in listed] == [note["permalink"]]
    assert {n["title"] for n in ok_json("list")["notes"]} == {CJK_TITLE, "Loose note"}
    assert [n["title"] for n in ok_json("list", "--tag", "课程")["notes"]] == [CJK_TITLE]
    plain = ok("list").stdout
    assert note["permalink"] in plain and "Loose note" in plain


def test_terminal_output_uses_tables_and_keeps_brackets(env, monkeypatch):
    note = ok_json("write", "[草稿] 计划", "--tag", "计划", "--body", "下周复习 [重点] 内容")
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    out = ok("search", "计划").stdout
    assert "[草稿]" in out  # titles are text, not Rich markup
    assert note["permalink"][:8] in out
    assert "[草稿]" in ok("list").stdout


@pytest.mark.parametrize("width", [60, 80, 200])
def test_terminal_tables_keep_every_column_at_any_width(env, monkeypatch, width):
    long = ok_json(
        "write", "A rather long English title about the database migration plan", "--type", "decision"
    )
    ok_json("write", "会议纪要：季度计划与预算评审", "--tag", "finance", "--body", "预算 120 万")
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", str(width))
    lines = ok("list").stdout.splitlines()
    assert all(len(line) <= width for line in lines)
    header = next(line for line in lines if "title" in line)
    assert all(h in header for h in ["title", "permalink", "type", "tags", "modified"]), header
    assert all(v in "".join(lines) for v in ["decision", "finance", "会议"])
    if width >= 200:  # room enough: ids are not broken across lines
        assert long["permalink"] in ok("list").stdout


@pytest.mark.parametrize("width", [60, 80, 200])
def test_terminal_search_keeps_path_line_whole_and_gives_the_snippet_the_width(env, monkeypatch, width):
    title = "会议纪要：季度计划评审"
    body = "本季度的预算 120 万，其中差旅 30 万，培训 20 万，设备采购与软件许可合计 70 万，余下留作机动。"
    note = ok_json("write", title, "--folder", "meetings", "--tag", "finance", "--body", body)
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", str(width))
    out = ok("search", "预算").stdout.splitlines()
    where = f"{note['path']}:{ok_json('search', '预算')['hits'][0]['line']}"
    at = [i for i, line in enumerate(out) if line.strip() == where]
    assert at, out  # path:line on a line of its own, whole
    snippet_lines = out[at[0] + 1 :]
    assert snippet_lines and all(line.startswith("    ") for line in snippet_lines if line.strip())
    assert "预算" in "".join(snippet_lines) and all(len(line) <= width for line in out)
    assert "coverage 100%" in "".join(out) and title in "".join(out)
    if width == 80:  # the snippet runs across the width, not in a narrow column
        from rich.cells import cell_len

        assert max(cell_len(line.rstrip()) for line in snippet_lines) > 60


def test_duplicate_write_refused_unless_overwrite(env):
    note = ok_json("write", "Prefs", "--body", "first")
    path = env.vault / note["path"]
    before = path.read_bytes()
    result = failed("write", "Prefs", "--body", "second", code=4)
    assert "error:" in result.stderr
    assert path.read_bytes() == before
    ok("write", "Prefs", "--body", "second", "--overwrite")
    assert "second" in path.read_text(encoding="utf-8")


def test_body_file_stdin_and_non_utf8(env):
    note = ok_json("write", "From stdin", "--body-file", "-", input="标准输入的正文\n".encode())
    assert "标准输入的正文" in (env.vault / note["path"]).read_text(encoding="utf-8")

    bad = env.root / "latin1.txt"
    bad.write_bytes("café".encode("latin-1"))
    before = md_files(env.vault)
    result = failed("write", "Latin", "--body-file", str(bad), code=2)
    assert "UTF-8" in result.stderr
    assert md_files(env.vault) == before
    missing = failed("write", "Missing", "--body-file", str(env.root / "nope.txt"), code=2)
    assert "nope.txt" in missing.stderr
    assert failed("write", "Both", "--body", "x", "--body-file", "-").exit_code == 2


# -- --where, --since/--until ----------------------------------------------------------------


def test_parse_where_mapping():
    assert parse_where([]) is None
    assert parse_where(["status=active"]) == {"status": "active"}
    assert parse_where(["confidence>0.7"]) == {"confidence": {"$gt": 0.7}}
    assert parse_where(["n>=2", "n<5"]) == {"n": {"$gte": 2, "$lt": 5}}
    assert parse_where(["status!=done"]) == {"status": {"$ne": "done"}}
    assert parse_where(["status:in=a, b ,3"]) == {"status": {"$in": ["a", "b", 3]}}
    assert parse_where(["priority:lte=-1.5", "pinned=true"]) == {"priority": {"$lte": -1.5}, "pinned": True}
    assert parse_where(["url=http://x?a=b"]) == {"url": "http://x?a=b"}
    for bad in ["status", "=x", "n>", "n:foo=1", "n:in=", "n>true"]:
        with pytest.raises(InvalidInput):
            parse_where([bad])
    with pytest.raises(InvalidInput):
        parse_where(["status=a", "status!=b"])


def test_search_where_ops(env):
    a = ok_json(
        "write", "Alpha task", "--type", "task", "--field", "status=active", "--field", "confidence=0.9"
    )
    b = ok_json(
        "write", "Beta task", "--type", "task", "--field", "status=paused", "--field", "confidence=0.5"
    )
    c = ok_json(
        "write", "Gamma task", "--type", "task", "--field", "status=done", "--field", "confidence=0.7"
    )
    assert a["frontmatter"]["confidence"] == 0.9

    def found(*where: str) -> set[str]:
        args = ["search", "task", "--json"]
        for clause in where:
            args += ["--where", clause]
        return set(permalinks(json.loads(ok(*args).stdout)))

    A, B, C = a["permalink"], b["permalink"], c["permalink"]
    assert found() == {A, B, C}
    assert found("status=active") == {A}
    assert found("confidence>0.7") == {A}
    assert found("confidence>=0.7") == {A, C}
    assert found("confidence<0.7") == {B}
    assert found("confidence<=0.7") == {B, C}
    assert found("status!=done") == {A, B}
    assert found("status:in=active,paused") == {A, B}
    assert found("confidence:gt=0.6", "confidence<0.8") == {C}
    assert found("status=active", "confidence<0.5") == set()

    bad = failed("search", "task", "--where", "status", code=2)
    assert "--where" in bad.output


def test_since_until(env):
    old = ok_json("write", "Old fact", "--body", "recorded long ago")
    new = ok_json("write", "New fact", "--body", "recorded today")
    path = env.vault / old["path"]
    text = path.read_text(encoding="utf-8")
    assert old["modified"] in text
    path.write_text(text.replace(old["modified"], "2020-03-01T10:00:00+00:00"), encoding="utf-8")

    def found(*args: str) -> set[str]:
        return set(permalinks(ok_json("search", "fact", *args)))

    assert found() == {old["permalink"], new["permalink"]}
    assert found("--since", "2021-01-01") == {new["permalink"]}
    assert found("--until", "2021-01-01") == {old["permalink"]}
    assert found("--since", "7d") == {new["permalink"]}
    assert found("--since", "2999-01-01") == set()
    result = failed("search", "fact", "--since", "not-a-date", code=2)
    assert "error:" in result.stderr


# -- append / edit / delete / restore --------------------------------------------------------


def test_append_to_missing_note_creates_nothing(env):
    note = write_course()
    before = {p: p.read_bytes() for p in md_files(env.vault)}
    result = failed("append", "no-such-note-0000", "[fact] should not land anywhere", code=3)
    assert result.stderr.startswith("error: ")
    assert {p: p.read_bytes() for p in md_files(env.vault)} == before

    as_json = run("append", "no-such-note-0000", "[fact] y", "--json")
    assert as_json.exit_code == 3
    assert json.loads(as_json.stdout)["error"]["code"] == "not_found"
    assert md_files(env.vault) == set(before)

    ok("append", note["permalink"], "[room] 六教 6A017 #地点")
    assert "- [room] 六教 6A017 #地点" in (env.vault / note["path"]).read_text(encoding="utf-8")


def test_edit_mismatch_changes_nothing(env):
    note = write_course()
    path = env.vault / note["path"]
    before = path.read_bytes()
    result = failed("edit", note["permalink"], "--find", "不在文中的句子", "--replace", "x", code=5)
    assert "error:" in result.stderr
    assert path.read_bytes() == before
    failed("edit", note["permalink"], "--find", "邓俊辉", "--replace", "x", "--expected", "2")
    assert path.read_bytes() == before
    edited = ok_json("edit", note["permalink"], "--find", "坐前排", "--replace", "坐中间")
    text = path.read_text(encoding="utf-8")
    assert "坐中间" in text and "坐前排" not in text and edited["permalink"] == note["permalink"]


def test_delete_and_restore(env):
    note = write_course()
    path = env.vault / note["path"]
    original = path.read_bytes()
    ok("delete", note["permalink"], "--reason", "课程结束")
    assert not path.exists()
    assert any(".trash" in p.parts for p in md_files(env.vault))
    assert ok_json("search", "数据")["hits"] == []
    failed("read", note["permalink"], code=3)

    restored = ok_json("restore", note["permalink"])
    assert restored["path"] == note["path"]
    assert path.read_bytes() == original
    assert permalinks(ok_json("search", "数据")) == [note["permalink"]]
    failed("restore", "no-such-note-0000")


# -- maintenance -----------------------------------------------------------------------------


def test_doctor_reports_damaged_file_untouched(env):
    ok("write", "Healthy", "--body", "fine")
    assert ok_json("doctor")["damaged"] == []
    broken = env.vault / "user" / "broken.md"
    data = b"---\ntitle: [unclosed\n---\n\nbody\n"
    broken.write_bytes(data)

    result = run("doctor", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    (damaged,) = report["damaged"]
    assert damaged["path"].endswith("broken.md") and damaged["error"]
    assert broken.read_bytes() == data

    plain = run("doctor")
    assert plain.exit_code == 1 and "broken.md" in plain.stdout
    # search still works around it and the file stays as it was
    assert [h["title"] for h in ok_json("search", "fine")["hits"]] == ["Healthy"]
    assert broken.read_bytes() == data


def test_reindex_after_losing_the_index(env):
    write_course()
    ok("write", "Python 索引设计", "--body", "数据库索引与数据结构", "--tag", "db")
    ok("write", "English note", "--body", "data structures in English")
    before = ok_json("search", "数据")
    assert len(before["hits"]) == 2
    removed = [p for p in env.home.rglob("*") if p.is_file() and p.suffix in {".sqlite", ".db"}]
    assert removed, list(env.home.rglob("*"))
    for p in env.home.rglob("*"):
        if p.is_file() and (p.suffix in {".sqlite", ".db"} or p.name.endswith(("-wal", "-shm"))):
            p.unlink()
    report = ok_json("reindex")
    assert report["added"] + report["updated"] + report["unchanged"] >= 3
    assert ok_json("search", "数据") == before
    assert "scanned" in ok("refresh").stdout
    assert ok_json("refresh")["damaged"] == []


def test_reindex_progress_on_a_terminal(env, monkeypatch):
    for i in range(3):
        ok("write", f"Bulk {i}", "--folder", "bulk", "--body", f"item {i}")
    seen: list[tuple[int, int]] = []
    original = common.ProgressBar.__call__

    def spy(self, done: int, total: int) -> None:
        seen.append((done, total))
        original(self, done, total)

    monkeypatch.setattr(common.ProgressBar, "__call__", spy)
    monkeypatch.setattr(common, "PROGRESS_MIN_NOTES", 1)
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    out = ok("reindex").stdout
    assert seen and seen[-1] == (3, 3)
    assert "scanned 3" in out


def test_init_and_status(env):
    out = ok("init").stdout
    assert str(env.vault) in out
    assert env.vault.is_dir()
    status = ok_json("status")
    assert isinstance(status, dict) and str(env.vault) in json.dumps(status, ensure_ascii=False)


def test_context_walks_relations(env):
    target = ok_json("write", "线性代数（2026 秋）", "--type", "course")
    course = write_course("--rel", "depends_on [[线性代数（2026 秋）]]")
    doc = ok_json("context", f"memory://{course['permalink']}")
    assert [n["permalink"] for n in doc["primary"]] == [course["permalink"]]
    assert target["permalink"] in {r["permalink"] for r in doc["related"]}
    assert "线性代数" in ok("context", f"memory://{course['permalink']}").stdout


# -- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize("title", ["../../etc/passwd", "/abs", "..", "a/../../b", "C:\\evil"])
def test_titles_stay_inside_the_vault(env, title):
    result = run("write", title, "--body", "x", "--json")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    outside = {p for p in env.root.rglob("*") if env.vault not in p.parents and p != env.vault}
    assert not any(p.name in {"passwd", "abs", "b", "evil"} or p.suffix == ".md" for p in outside), outside
    if result.exit_code == 0:
        note = json.loads(result.stdout)
        written = (env.vault / note["path"]).resolve()
        assert written.is_relative_to((env.vault / "user").resolve())
        assert written.is_file()
    else:
        assert result.stderr.startswith("error: ")


def test_folder_traversal_refused_or_contained(env):
    result = run("write", "x", "--folder", "../../outside", "--json")
    assert not (env.root / "outside").exists()
    assert not (env.vault / "outside").exists()
    if result.exit_code == 0:
        path = (env.vault / json.loads(result.stdout)["path"]).resolve()
        assert path.is_relative_to((env.vault / "user").resolve())
    else:
        assert result.stderr.startswith("error: ") and "Traceback" not in result.output


@pytest.mark.parametrize("title", ["", "   "])
def test_empty_title_is_a_clear_error(env, title):
    result = failed("write", title, "--body", "x")
    assert result.stderr.startswith("error: ")
    assert md_files(env.vault / "user") == set()


def test_huge_body(env):
    big = env.root / "big.md"
    body = ("长文本段落，测试索引容量。 filler words here\n" * 26000) + "结尾的独特词 zebracorn\n"
    big.write_text(body, encoding="utf-8")
    assert big.stat().st_size > 1_000_000
    result = run("write", "Big note", "--body-file", str(big), "--json")
    assert "Traceback" not in result.output
    if result.exit_code != 0:
        assert result.stderr.startswith("error: ")
        return
    note = json.loads(result.stdout)
    assert len((env.vault / note["path"]).read_bytes()) > 1_000_000
    # text past the first few thousand characters is searchable too
    assert permalinks(ok_json("search", "zebracorn")) == [note["permalink"]]


def test_missing_note_json_error(env):
    result = run("--json", "read", "nope-1234")
    assert result.exit_code == 3
    assert json.loads(result.stdout) == {"error": {"code": "not_found", "message": result.stderr[7:].strip()}}


def test_usage_errors_exit_2(env):
    assert run("write").exit_code == 2
    assert run("search", "--limit", "zero").exit_code == 2
    assert run("no-such-command").exit_code == 2


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "write"],  # a missing argument: Click's own check
        ["--json", "search", "--where", "bad"],  # our parsers' checks
        ["search", "--where", "bad", "--json"],
        ["--json", "write", "x", "--field", "novalue"],
        ["--json", "write", "x", "--body", "a", "--body-file", "b"],
    ],
)
def test_usage_errors_under_json_say_so_on_stdout_too(env, args):
    result = run(*args)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_input" and error["message"] and error["message"] in result.stderr


def test_a_number_too_wide_for_sqlite_is_compared_not_a_crash(env):
    ok_json("write", "Backlog", "--field", "priority=7")
    assert ok_json("search", "--where", "priority>100000000000000000000")["hits"] == []
    assert permalinks(ok_json("search", "--where", "priority<100000000000000000000")) != []


# -- help ------------------------------------------------------------------------------------


def test_every_command_and_parameter_has_help():
    group = get_command(app)
    expected = {
        "init", "write", "append", "edit", "read", "search", "list", "context", "delete",
        "restore", "refresh", "reindex", "doctor", "status", "serve", "snapshot",
    }  # fmt: skip
    assert expected <= set(group.commands)
    for name, command in group.commands.items():
        assert (command.help or "").strip(), f"{name} has no help"
        for param in command.params:
            assert getattr(param, "help", None), f"{name} {param.name} has no help"
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.stdout, name
    assert "--where" in runner.invoke(app, ["search", "--help"]).stdout
    assert "$in" in runner.invoke(app, ["search", "--help"]).stdout
    assert "--scopes" in runner.invoke(app, ["search", "--help"]).stdout
    assert "--allow-scope" in runner.invoke(app, ["serve", "--help"]).stdout


# -- serve wiring (the server itself is tested with the MCP module) ---------------------------


def test_serve_calls_the_mcp_module(env, monkeypatch):
    calls: list[tuple] = []
    fake = types.ModuleType("cairn.mcp_server")
    fake.serve_stdio = lambda memory: calls.append(("stdio", memory.vault, memory.scope, memory.allow_scopes))  # type: ignore[attr-defined]
    fake_http = types.ModuleType("cairn.mcp_http")
    fake_http.serve_http = lambda memory, token=None, **address: calls.append(("http", address, token))  # type: ignore[attr-defined]
    fake_http.load_or_create_token = lambda home: calls.append(("token", Path(home))) or "tok-123"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cairn.mcp_server", fake)
    monkeypatch.setattr(cairn, "mcp_server", fake, raising=False)
    monkeypatch.setitem(sys.modules, "cairn.mcp_http", fake_http)
    monkeypatch.setattr(cairn, "mcp_http", fake_http, raising=False)

    result = ok("serve")
    assert result.stdout == ""  # stdout is the MCP channel
    assert Path(calls[0][1]).resolve() == env.vault.resolve()
    assert calls[0][2:] == ("user", ("user",))
    calls.clear()
    ok("serve", "--allow-scope", "agent:a", "--allow-scope", "group:g")
    assert calls[0][2:] == ("agent:a", ("agent:a", "group:g"))  # the first allowed scope is the default
    calls.clear()
    ok("--scope", "group:g", "serve", "--allow-scope", "agent:a,group:g")
    assert calls[0][2:] == ("group:g", ("agent:a", "group:g"))
    calls.clear()
    refused = failed("--scope", "user", "serve", "--allow-scope", "agent:a", code=7)
    assert "not among the allowed scopes" in refused.stderr and calls == []
    for empty in ("", " , "):  # --allow-scope "$AGENT_SCOPE" with the variable unset
        refused = failed("serve", "--allow-scope", empty, code=2)
        assert "no scope given" in refused.stderr and calls == []
    assert "no scope given" in failed("search", "x", "--scopes", "", code=2).stderr
    ok("serve", "--http", "--port", "9999")
    assert calls[0][0] == "token" and calls[0][1].resolve() == env.home.resolve()
    assert calls[1] == ("http", {"port": 9999}, "tok-123")  # what was not given is serve_http's default
    calls.clear()
    ok("serve", "--http", "--host", "0.0.0.0")
    assert calls[1] == ("http", {"host": "0.0.0.0"}, "tok-123")


def test_serve_refuses_an_address_it_cannot_use_before_printing_the_token(env) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        refused = failed("serve", "--http", "--port", port, "--json", code=2)
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "invalid_input"
    assert f"127.0.0.1:{port}" in error["message"] and "--port" in error["message"]
    token = (env.home / "mcp-token").read_text(encoding="utf-8").strip()
    assert token not in refused.stderr + refused.stdout
    unknown = failed("serve", "--http", "--host", "no-such-host.invalid", "--port", "0", code=2)
    assert "no-such-host.invalid" in unknown.stderr
    for options in (["--port", "9000"], ["--host", "0.0.0.0"]):  # stdio has no address to give them to
        ignored = failed("serve", *options, code=2)
        assert options[0] in ignored.stderr and "--http" in ignored.stderr


# -- the real entry points -------------------------------------------------------------------


def _proc_env(env) -> dict[str, str]:
    return {
        **os.environ,
        "CAIRN_VAULT": str(env.vault),
        "CAIRN_HOME": str(env.home),
        "HOME": str(env.root / "home"),
    }


def test_entry_point_subprocess(env):
    exe = str(BIN / "cairn")
    e = _proc_env(env)
    wrote = subprocess.run(
        [exe, "write", "数据结构课", "--obs", "[teacher] 邓俊辉", "--json"],
        capture_output=True,
        env=e,
        timeout=60,
    )
    assert wrote.returncode == 0, wrote.stderr.decode()
    note = json.loads(wrote.stdout.decode("utf-8"))
    found = subprocess.run([exe, "search", "数据", "--json"], capture_output=True, env=e, timeout=60)
    assert found.returncode == 0
    assert permalinks(json.loads(found.stdout.decode("utf-8"))) == [note["permalink"]]

    # JSON is UTF-8 even when the locale asks for ASCII
    ascii_env = {**e, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"}
    shown = subprocess.run(
        [exe, "--json", "read", note["permalink"]], capture_output=True, env=ascii_env, timeout=60
    )
    assert shown.returncode == 0, shown.stderr.decode()
    assert "邓俊辉".encode() in shown.stdout

    # python -m cairn is the same program
    mod = subprocess.run(
        [sys.executable, "-m", "cairn", "read", note["permalink"]], capture_output=True, env=e, timeout=60
    )
    assert mod.returncode == 0 and mod.stdout == (env.vault / note["path"]).read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ["search", "x", "--since", "yesterday-ish"],
        ["search", "x", "--where", "confidence>>1"],
        ["append", "missing-0000", "[a] b"],
        ["write", ""],
        ["edit", "missing-0000", "--find", "a", "--replace", "b"],
    ],
)
def test_no_traceback_on_bad_input_subprocess(env, args):
    proc = subprocess.run([str(BIN / "cairn"), *args], capture_output=True, env=_proc_env(env), timeout=60)
    stderr = proc.stderr.decode("utf-8")
    assert proc.returncode >= 2, (proc.returncode, stderr)
    assert "Traceback" not in stderr
    assert stderr.startswith(("error: ", "Usage: ")), stderr


# -- startup: what a command loads and how its values are converted ---------------------------

# Only other commands need these: Typer's Pydantic coercion (cairn converts plain values itself),
# yaml and the note parser (writes, changed files), the MCP SDK (serve), Rich (terminal tables),
# the inotify watcher (serve), the snapshot builder (snapshot).
HEAVY = ("pydantic", "yaml", "cairn.markdown", "mcp", "rich", "cairn.watch", "cairn.snapshot")


def _modules_after(code: str, env) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sys.modules), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, env=_proc_env(env), timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return set(proc.stderr.decode().split())


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m in HEAVY or m.split(".")[0] in HEAVY}


def test_import_and_search_stay_light(env):
    note = ok_json("write", "数据结构课", "--obs", "[teacher] 邓俊辉")
    old = (env.vault / note["path"]).stat().st_mtime - 3600
    os.utime(env.vault / note["path"], (old, old))  # not "fresh": the next scan need not re-read it
    ok("refresh")

    imported = _modules_after("import cairn.cli", env)
    assert not _heavy(imported) and "cairn.memory" not in imported, _heavy(imported)

    searched = _modules_after(
        "from cairn.cli import app\n"
        "app(['search', '数据', '--json', '--limit', '5', '--tag', 'x', '--where', 'a>1'],"
        " prog_name='cairn', standalone_mode=False)",
        env,
    )
    assert not _heavy(searched), _heavy(searched)


def test_plain_values_convert_as_typer_converts_them(tmp_path):
    """The Pydantic-free conversion gives what Typer's own gives, or hands the value to Typer."""
    import typer

    group = get_command(app)
    ctx = typer.Context(group, info_name="cairn")
    values = [
        None, "", "abc", "10", "0", "-1", "-0", "010", " 5", "+5", "1e3", "9" * 20, 10, 0, -3, 65536,
        True, False, ("a", "b"), ["a"], (), ("a", 1), "rel/path", str(tmp_path), str(tmp_path / "none"),
        b"bytes", "a\0b", "-",
    ]  # fmt: skip

    def outcome(runtime, param, value):
        try:
            result = runtime.coerce(value, param=param, ctx=ctx)
        except Exception as exc:  # the error and its message must be the same
            return ("error", type(exc), str(exc))
        return ("ok", type(result), result)

    checked = 0
    for command in [group, *group.commands.values()]:
        for param in command.get_params(ctx):
            plain = param.get_runtime_param()
            typers = type(param).get_runtime_param(param)
            assert plain is not typers, (command.name, param.name)  # every parameter takes the plain path
            for value in values:
                assert outcome(plain, param, value) == outcome(typers, param, value), (param.name, value)
                checked += 1
    assert checked > 1000


# -- issue 33: bugs and friction at the command line -----------------------------------------


def test_a_write_the_file_system_refuses_is_one_line(env):
    ok("init")
    (env.vault / "user" / "courses").write_text("a file where a folder should be", encoding="utf-8")
    result = failed("write", "Linear algebra", "--folder", "courses", "--json", code=12)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: cannot write ")
    assert str(env.vault / "user" / "courses") in result.stderr and "File exists" in result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "folder_unwritable"
    assert not list(env.vault.rglob("*.tmp"))


def test_a_full_disk_is_one_line_and_leaves_nothing_subprocess(env):
    """A real full-file-system error: the child may write at most 64 KiB per file (RLIMIT_FSIZE)."""
    ok("init")
    ok("write", "Small note", "--body", "x")  # the index exists and is small
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
        "from cairn.cli import app\n"
        "app(sys.argv[1:], prog_name='cairn')\n"
    )
    body = "长" * 40_000  # 120 KB of UTF-8
    proc = subprocess.run(
        [sys.executable, "-c", code, "write", "Big note", "--body", body],
        capture_output=True,
        env=_proc_env(env),
        timeout=60,
    )
    stderr = proc.stderr.decode("utf-8")
    assert proc.returncode != 0 and "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1 and str(env.vault) in stderr, stderr
    assert "File too large" in stderr or "full" in stderr, stderr
    assert not (env.vault / "user" / "Big note.md").exists()
    assert not list(env.vault.rglob("*.tmp"))


def test_a_tag_inside_an_observation_stays_where_it_was_written(env):
    note = ok_json(
        "write",
        "Incident log",
        "--obs",
        "[fact] issue #123 is fixed",
        "--obs",
        "[ops] notify #ops channel #urgent",
    )
    text = (env.vault / note["path"]).read_text(encoding="utf-8")
    assert "- [fact] issue #123 is fixed\n" in text
    assert "- [ops] notify #ops channel #urgent\n" in text
    obs = {o["content"]: o["tags"] for o in note["observations"]}
    assert obs == {"issue #123 is fixed": ["123"], "notify #ops channel": ["ops", "urgent"]}
    ok("append", note["permalink"], "[fact] ticket #77 reopened (by QA)")
    assert "- [fact] ticket #77 reopened (by QA)\n" in (env.vault / note["path"]).read_text(encoding="utf-8")


def test_context_prints_relations_in_their_direction(env):
    cluster = ok_json("write", "staging-cluster")
    checklist = ok_json("write", "Deployment checklist", "--rel", "depends_on [[staging-cluster]]")
    out = ok("context", f"memory://{cluster['permalink']}").stdout
    assert f"{cluster['permalink']} <-depends_on- Deployment checklist" in out, out
    assert "-depends_on-> Deployment checklist" not in out
    out = ok("context", f"memory://{checklist['permalink']}").stdout
    assert f"{checklist['permalink']} -depends_on-> staging-cluster" in out, out
    related = ok_json("context", f"memory://{cluster['permalink']}")["related"]
    assert [(r["permalink"], r["direction"]) for r in related] == [(checklist["permalink"], "in")]
    related = ok_json("context", f"memory://{checklist['permalink']}")["related"]
    assert [(r["permalink"], r["direction"]) for r in related] == [(cluster["permalink"], "out")]


def test_delete_says_where_the_file_went(env):
    note = ok_json("write", "Old plan", "--body", "x")
    out = ok("delete", note["permalink"]).stdout
    assert "moved to user/.trash/Old plan.md" in out and (env.vault / "user/.trash/Old plan.md").exists()
    again = ok_json("write", "Old plan", "--body", "y")
    deleted = ok_json("delete", again["permalink"])
    assert deleted["path"] == "user/.trash/Old plan (2).md"
    assert (env.vault / deleted["path"]).exists()


@pytest.mark.parametrize("obs", ["[x] done", "[ ] todo", "[X] done"])
def test_a_checkbox_is_refused_as_a_checkbox(env, obs):
    result = failed("write", "Tasks", "--obs", obs, code=2)
    assert "checkbox" in result.stderr and f"[{obs[1]}]" in result.stderr


def test_a_blank_category_is_refused_by_name(env):
    result = failed("write", "Tasks", "--obs", "[]  text", code=2)
    assert "[category] is blank" in result.stderr


def test_doctor_names_each_damaged_path_once(env):
    ok("init")
    (env.vault / "user" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    result = failed("doctor", code=1)
    line = next(line for line in result.stdout.splitlines() if line.startswith("damaged:"))
    assert line.count("broken.md") == 1, line


def test_status_says_why_a_one_shot_command_scans(env):
    ok("init")
    out = ok("status").stdout
    assert "freshness_now: scan" in out and "freshness_why: a one-shot command starts no watcher" in out
    assert "cairn serve" in ok_json("status")["freshness_why"]


def test_usage_errors_are_one_line_with_a_help_hint(env):
    for args, command in (
        (["write"], "cairn write"),
        (["search", "--limit", "zero"], "cairn search"),
        (["nope"], "cairn"),
    ):
        result = run(*args)
        assert result.exit_code == 2
        assert result.stderr.count("\n") == 1 and "Usage:" not in result.stderr, result.stderr
        assert result.stderr.startswith("error: ") and f"(see {command} --help)" in result.stderr


@pytest.mark.parametrize(
    "args, said",
    [
        (["--where", "confidence>abc"], "compares numbers or dates"),
        (["--where", "status=="], "a value is missing"),
        (["--where", "status!="], "a value is missing"),
        (
            ["--since", "2026-03-01", "--until", "2026-02-01"],
            "--since 2026-03-01 is after --until 2026-02-01",
        ),
    ],
)
def test_bad_filters_are_errors_not_empty_results(env, args, said):
    ok_json("write", "Plan", "--field", "confidence=0.9", "--field", "status=active")
    result = failed("search", *args, code=2)
    assert said in result.stderr and result.stderr.count("\n") == 1
    assert ok_json("search", "--where", "confidence>0.5")["hits"]  # a good value still finds it


def test_messages_use_the_option_names_the_user_types(env):
    note = ok_json("write", "Deploy", "--body", "step step step")
    result = failed("edit", note["permalink"], "--find", "step", "--replace", "go", code=5)
    assert "--expected 3" in result.stderr and "expected=" not in result.stderr


def test_the_depth_limit_is_one_number_everywhere(env):
    from cairn import Memory
    from cairn.query_filters import MAX_CONTEXT_DEPTH

    help_text = run("context", "--help").stdout
    assert f"0 to {MAX_CONTEXT_DEPTH}" in help_text
    note = ok_json("write", "Root")
    too_deep = failed(
        "context", f"memory://{note['permalink']}", "--depth", str(MAX_CONTEXT_DEPTH + 1), code=2
    )
    assert str(MAX_CONTEXT_DEPTH) in too_deep.stderr and too_deep.stderr.count("\n") == 1
    ok("context", f"memory://{note['permalink']}", "--depth", str(MAX_CONTEXT_DEPTH))
    with (
        Memory.open(env.vault, home=env.home, watch=False) as mem,  # the library's own bound agrees
        pytest.raises(InvalidInput, match=f"between 0 and {MAX_CONTEXT_DEPTH}"),
    ):
        mem.context(f"memory://{note['permalink']}", depth=MAX_CONTEXT_DEPTH + 1)


def test_read_of_a_damaged_file_prints_it_as_it_is(env):
    ok("init")
    raw = b"---\ntitle: [unclosed\n---\n\xe9\xa2\x84\xe7\xae\x97 body\n"
    (env.vault / "user" / "broken.md").write_bytes(raw)
    result = ok("read", "user/broken.md")
    assert result.stdout_bytes == raw
    assert result.stderr.startswith("warning: ") and "printed as it is" in result.stderr
    assert failed("read", "user/broken.md", "--json", code=6).stdout  # JSON has no note to give


def test_search_says_how_many_damaged_files_it_skipped(env):
    ok_json("write", "Budget", "--body", "预算 120 万")
    (env.vault / "user" / "broken.md").write_text("---\ntitle: [unclosed\n---\n预算\n", encoding="utf-8")
    result = ok("search", "预算")
    assert "1 damaged file was skipped" in result.stderr and "cairn doctor" in result.stderr


def test_unknown_config_keys_are_named_with_the_nearest_known_key(env):
    ok("init")
    (env.vault / "cairn.toml").write_text('timezon = "+08:00"\nallow_scope = ["user"]\n', encoding="utf-8")
    doctor = ok("doctor").stdout
    assert "unknown key 'timezon'" in doctor and "did you mean 'timezone'?" in doctor
    assert "did you mean 'allow_scopes'?" in doctor
    assert ok_json("doctor")["config_warnings"]
    status = ok("status")
    assert "warning: " in status.stderr and "did you mean 'timezone'?" in status.stderr


def test_a_first_command_on_an_unindexed_vault_shows_progress(env, monkeypatch):
    folder = env.vault / "user" / "bulk"
    folder.mkdir(parents=True)
    for i in range(5):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nitem {i}\n", encoding="utf-8")
    seen: list[tuple[int, int]] = []
    original = common.ProgressBar.__call__

    def spy(self, done: int, total: int) -> None:
        seen.append((done, total))
        original(self, done, total)

    monkeypatch.setattr(common.ProgressBar, "__call__", spy)
    monkeypatch.setattr(common, "PROGRESS_MIN_NOTES", 1)
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    ok("search", "item")
    assert seen and seen[-1] == (5, 5)
    seen.clear()
    ok("search", "item")  # indexed now: no bar
    assert seen == []


def test_version_completion_and_trash(env):
    assert ok("--version").stdout.strip() == f"cairn {cairn.__version__}"
    assert "--install-completion" in ok("--help").stdout and "--show-completion" in ok("--help").stdout
    assert ok("trash", "--json").stdout.strip() == '{\n  "trash": []\n}'
    first = ok_json("write", "Trip", "--body", "a")
    ok("delete", first["permalink"], "--reason", "outdated")
    listed = ok_json("trash")["trash"]
    assert [(e["permalink"], e["title"], e["path"], e["reason"]) for e in listed] == [
        (first["permalink"], "Trip", "user/.trash/Trip.md", "outdated")
    ]
    assert listed[0]["deleted"][:4].isdigit()
    plain = ok("trash").stdout
    assert first["permalink"] in plain and "user/.trash/Trip.md" in plain


def test_terminal_search_marks_weak_hits_and_highlights_words(env, monkeypatch):
    ok_json("write", "Kyoto trip", "--body", "temples and gardens in April")
    ok_json("write", "Packing list", "--body", "rain jacket for the temples")
    monkeypatch.setattr(common, "_is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = ok("search", "temples gardens").stdout
    hits = ok_json("search", "temples gardens")["hits"]
    weak = [h for h in hits if h["coverage"] < 0.5]
    assert weak, hits  # "Packing list" holds one word of two
    assert "weak match" in out
    assert "\x1b[1;7mtemples\x1b[0m" in out  # the matched word, highlighted
    plain = run("search", "temples gardens")  # in a pipe only the weak hit says so
    monkeypatch.setattr(common, "_is_terminal", lambda: False)
    assert "weak match" in ok("search", "temples gardens").stdout and plain.exit_code == 0


def test_doctor_names_unresolved_relations(env):
    ok("write", "Deploy", "--rel", "depends_on [[Staging cluster]]")
    out = ok("doctor").stdout
    assert "unresolved: user/Deploy.md -depends_on-> [[Staging cluster]]" in out
    assert ok_json("doctor")["unresolved"] == [
        {"path": "user/Deploy.md", "type": "depends_on", "target": "Staging cluster"}
    ]
    ok("write", "Staging cluster")
    assert ok_json("doctor")["unresolved"] == []


def test_every_documented_config_key_is_known(env):
    """docs/configuration.md's keys are read by Cairn: none of them is warned about as unknown."""
    import re

    docs = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    keys = set(re.findall(r"^\| `([a-z_]+)` \|", docs, flags=re.M))
    assert {"timezone", "sync_interval", "observations_max", "inject_char_cap", "write_mode"} <= keys
    ok("init")
    (env.vault / "cairn.toml").write_text(
        'timezone = "Asia/Shanghai"\nsync_interval = 600\nobservations_max = 100\ninject_char_cap = 4000\n'
        'write_mode = "direct"\nproposal_ttl = "30m"\nallow_scopes = ["user"]\n',
        encoding="utf-8",
    )
    assert "unknown key" not in ok("status").stderr
    for key in keys:
        (env.vault / "cairn.toml").write_text(f"{key} = 0\n", encoding="utf-8")
        assert f"unknown key {key!r}" not in run("status").stderr, key
