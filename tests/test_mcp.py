"""The MCP server, driven through the SDK's own client: in-process, over stdio and over HTTP."""

import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from cairn import Memory
from cairn.mcp_server import READ_CHUNK_BYTES, http_banner, load_or_create_token
from mcp_client import call, call_error, connect

pytestmark = pytest.mark.anyio

TOOLS = {
    "memory_search",
    "memory_read",
    "memory_list",
    "memory_context",
    "memory_write",
    "memory_append",
    "memory_edit",
    "memory_delete",
    "memory_refresh",
    *("memory_observe", "memory_dream_load", "memory_dream_apply"),  # mcp_governance (issue 35)
}
HIT_KEYS = {"permalink", "title", "type", "tags", "modified", "path", "line", "snippet", "score", "related"}


COURSE = {
    "title": "数据结构（2026 秋）",
    "type": "course",
    "folder": "courses",
    "tags": ["课程", "ds", "data-structures"],
    "observations": [
        {"category": "teacher", "text": "邓俊辉", "tags": ["重要"], "context": "讲得快"},
        {"category": "deadline", "text": "大作业 12 月第 2 周截止"},
    ],
    "relations": [{"type": "belongs_to", "target": "我的课表 2026 秋"}],
}
TRIP = {
    "title": "Kyoto trip, April 2026",
    "tags": ["travel", "japan"],
    "observations": [{"category": "preference", "text": "Prefers ryokan over hotels"}],
}


# -- surface ----------------------------------------------------------------------------------


async def test_lists_all_tools_with_short_descriptions(memory: Memory) -> None:
    async with connect(memory) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for t in tools:
            assert t.description and len(t.description) < 600, t.name
            assert "    " not in t.description, f"{t.name}: indentation sent to the model"
            for name, prop in t.input_schema.get("properties", {}).items():
                assert prop.get("description"), f"{t.name}.{name} has no description"
        size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]))
        assert size < 16_000, "tool schemas grew: keep them small"
        write = next(t for t in tools if t.name == "memory_write")
        assert "memory_append" in write.description and "search" in write.description.lower()
        assert "memory_search" in (client.instructions or "")


async def test_guidelines_prompt_and_note_resource(memory: Memory) -> None:
    async with connect(memory) as client:
        prompts = (await client.list_prompts()).prompts
        assert "memory-guidelines" in {p.name for p in prompts}
        prompt = await client.get_prompt("memory-guidelines")
        text = prompt.messages[0].content.text
        assert "memory_search" in text and "memory_append" in text and "数据结构（2026 秋）" in text

        written = await call(client, "memory_write", **COURSE)
        read = await client.read_resource(f"memory://{written['permalink']}")
        assert read.contents[0].text == memory.read(written["permalink"]).text
        assert "邓俊辉" in read.contents[0].text
        with pytest.raises(MCPError):
            await client.read_resource("memory://no-such-note-0000")


# -- writes and reads ---------------------------------------------------------------------------


async def test_write_then_search_in_chinese_and_english(memory: Memory) -> None:
    async with connect(memory) as client:
        course = await call(client, "memory_write", **COURSE)
        trip = await call(client, "memory_write", **TRIP)
        assert course["title"] == COURSE["title"] and course["observations"] == 2 and course["relations"] == 1
        assert course["path"].endswith(".md") and course["path"] != trip["path"]

        # The structured observations were written as Markdown lines a person can read.
        on_disk = (memory.vault / course["path"]).read_text(encoding="utf-8")
        assert "- [teacher] 邓俊辉 #重要 (讲得快)" in on_disk
        assert "belongs_to [[我的课表 2026 秋]]" in on_disk

        found = await call(client, "memory_search", query="数据")  # part of 数据结构
        assert found["hits"], found
        assert found["hits"][0]["permalink"] == course["permalink"]
        assert set(found["hits"][0]) >= HIT_KEYS

        found = await call(client, "memory_search", query="ryokan")
        assert [h["permalink"] for h in found["hits"]] == [trip["permalink"]]

        found = await call(client, "memory_search", tags=["travel"])
        assert [h["title"] for h in found["hits"]] == [TRIP["title"]]

        # The model reads the text block: it must carry the same data, compactly.
        raw = await client.call_tool("memory_search", {"query": "邓俊辉"})
        assert json.loads(raw.content[0].text) == raw.structured_content
        assert raw.structured_content["hits"][0]["title"] == COURSE["title"]


async def test_search_returns_eight_hits_by_default(memory: Memory) -> None:
    for i in range(10):
        memory.write(f"Recipe {i}", tags=["recipe"], observations=[f"[step] chop onion number {i}"])
    async with connect(memory) as client:
        found = await call(client, "memory_search", query="onion")
        assert found["count"] == len(found["hits"]) == 8
        found = await call(client, "memory_search", query="onion", limit=3)
        assert len(found["hits"]) == 3


async def test_read_truncates_at_8k_and_offsets_page_through(memory: Memory) -> None:
    body = "".join(f"第 {i} 行：数据结构 data structures, 红黑树 and B-trees.\n" for i in range(600))
    note = memory.write("Long lecture notes", body=body)
    full = memory.read(note.permalink).text
    assert len(full.encode("utf-8")) > 3 * READ_CHUNK_BYTES

    async with connect(memory) as client:
        parts, offset, calls = [], 0, 0
        while True:
            result = await client.call_tool("memory_read", {"permalink": note.permalink, "offset": offset})
            assert not result.is_error, result
            data = result.structured_content
            chunk = data["text"]
            assert len(chunk.encode("utf-8")) <= READ_CHUNK_BYTES
            parts.append(chunk)
            calls += 1
            if not data["truncated"]:
                assert data["next_offset"] is None
                assert result.content[0].text == chunk
                break
            # A cut never splits a character, and the hint tells the model where to go on.
            assert len(chunk.encode("utf-8")) > READ_CHUNK_BYTES - 4
            assert data["next_offset"] == offset + len(chunk.encode("utf-8"))
            assert f"offset={data['next_offset']}" in result.content[0].text.splitlines()[-1]
            offset = data["next_offset"]
        assert "".join(parts) == full
        assert calls >= 4

        inside_a_character = full.encode("utf-8").index("第".encode()) + 1
        message = await call_error(client, "memory_read", permalink=note.permalink, offset=inside_a_character)
        assert "offset" in message
        message = await call_error(client, "memory_read", permalink=note.permalink, offset=10**9)
        assert "offset" in message


async def test_append_adds_one_observation(memory: Memory) -> None:
    async with connect(memory) as client:
        course = await call(client, "memory_write", **COURSE)
        result = await call(
            client,
            "memory_append",
            permalink=course["permalink"],
            category="exam",
            text="期末闭卷",
            tags=["考试"],
        )
        assert result["permalink"] == course["permalink"]
    note = memory.read(course["permalink"])
    assert [(o.category, o.content, o.tags) for o in note.observations][-1] == ("exam", "期末闭卷", ("考试",))


async def test_append_to_a_missing_note_fails_and_creates_nothing(memory: Memory) -> None:
    async with connect(memory) as client:
        await call(client, "memory_write", **TRIP)
        before = sorted(p.relative_to(memory.vault) for p in memory.vault.rglob("*.md"))
        message = await call_error(
            client, "memory_append", permalink="kyoto-trp-0000", category="fact", text="x"
        )
        assert "kyoto-trp-0000" in message and "not_found" in message
        after = sorted(p.relative_to(memory.vault) for p in memory.vault.rglob("*.md"))
        assert after == before


async def test_edit_replaces_text_and_a_mismatch_changes_nothing(memory: Memory) -> None:
    async with connect(memory) as client:
        course = await call(client, "memory_write", **COURSE)
        path = memory.vault / course["path"]
        before = path.read_bytes()

        message = await call_error(
            client, "memory_edit", permalink=course["permalink"], find="周三", replace="周四"
        )
        assert "edit_mismatch" in message
        assert path.read_bytes() == before

        await call(
            client, "memory_edit", permalink=course["permalink"], find="12 月第 2 周", replace="12 月第 3 周"
        )
        assert "12 月第 3 周" in path.read_text(encoding="utf-8")


async def test_delete_names_the_title_and_search_forgets_it(memory: Memory) -> None:
    async with connect(memory) as client:
        course = await call(client, "memory_write", **COURSE)
        assert (await call(client, "memory_search", query="邓俊辉"))["hits"]

        result = await client.call_tool(
            "memory_delete", {"permalink": course["permalink"], "reason": "course over"}
        )
        assert not result.is_error
        assert result.structured_content["title"] == COURSE["title"]
        assert COURSE["title"] in result.content[0].text

        assert (await call(client, "memory_search", query="邓俊辉"))["hits"] == []
        assert "not_found" in await call_error(client, "memory_read", permalink=course["permalink"])


async def test_list_context_and_refresh(memory: Memory) -> None:
    async with connect(memory) as client:
        course = await call(client, "memory_write", **COURSE)
        schedule = await call(
            client, "memory_write", title="我的课表 2026 秋", folder="courses", tags=["课表"]
        )
        trip = await call(client, "memory_write", **TRIP)

        listed = await call(client, "memory_list", folder="courses")
        assert {n["permalink"] for n in listed["notes"]} == {course["permalink"], schedule["permalink"]}
        assert "text" not in listed["notes"][0]

        context = await call(client, "memory_context", url=f"memory://{course['permalink']}")
        assert [p["permalink"] for p in context["primary"]] == [course["permalink"]]
        assert "邓俊辉" in context["primary"][0]["body"] and "frontmatter" not in context["primary"][0]
        assert schedule["permalink"] in {r["permalink"] for r in context["related"]}
        assert trip["permalink"] not in {r["permalink"] for r in context["related"]}

        # A file written by hand is seen.
        (memory.vault / "user" / "hand.md").write_text(
            "# Hand written\n\n- [fact] walnut tree\n", encoding="utf-8"
        )
        report = await call(client, "memory_refresh")
        assert {"scanned", "added", "updated", "removed"} <= set(report)
        assert (await call(client, "memory_search", query="walnut"))["hits"]


async def test_bad_arguments_are_tool_errors_not_crashes(memory: Memory) -> None:
    async with connect(memory) as client:
        assert "limit" in await call_error(client, "memory_search", query="x", limit=-1)
        assert "invalid_input" in await call_error(client, "memory_write", title="")
        assert "invalid_input" in await call_error(
            client, "memory_write", title="Bad link", relations=[{"type": "x", "target": "a [b]"}]
        )
        assert "scope" in (await call_error(client, "memory_search", query="x", scope="agent:other")).lower()
        # The server is still healthy afterwards, and nothing was written.
        assert (await call(client, "memory_search", query=""))["hits"] == []


async def test_a_credential_is_refused(memory: Memory) -> None:
    async with connect(memory) as client:
        message = await call_error(
            client,
            "memory_write",
            title="Secret",
            observations=[{"category": "fact", "text": "api key sk-abcdefghijklmnopqrstuvwxyz123456"}],
        )
        assert "secret" in message.lower()
        assert (await call(client, "memory_search", query=""))["hits"] == []


async def test_write_takes_expires_supersedes_and_knowledge(memory: Memory) -> None:
    async with connect(memory) as client:
        old = await call(
            client,
            "memory_write",
            title="Deploy target",
            observations=[{"category": "f", "text": "server-a"}],
        )
        new = await call(
            client,
            "memory_write",
            title="Deploy target (corrected)",
            observations=[{"category": "f", "text": "server-b"}],
            supersedes=[old["permalink"]],
            knowledge={
                "applicability": ["only the staging cluster"],
                "claim": {"key": "deploy.target", "value": "server-b"},
            },
        )
        promo = await call(
            client,
            "memory_write",
            title="Promo",
            observations=[{"category": "deal", "text": "server coupon"}],
            expires="2020-01-01",
        )
        front = memory.read(new["permalink"]).frontmatter
        assert front["supersedes"] == [old["permalink"]]
        assert front["knowledge"] == {
            "applicability": ["only the staging cluster"],
            "claim": {"key": "deploy.target", "value": "server-b"},
        }
        assert "counterexamples" not in front["knowledge"]

        hits = (await call(client, "memory_search", query="server"))["hits"]
        assert [h["permalink"] for h in hits] == [
            new["permalink"],
            old["permalink"],
        ]  # expired promo left out
        assert hits[1]["superseded_by"] == [new["permalink"]]
        assert hits[0]["claim"]["key"] == "deploy.target"
        assert memory.read(promo["permalink"]).frontmatter["expires"] == "2020-01-01"

        assert "invalid_input" in await call_error(
            client, "memory_write", title="Bad date", expires="next tuesday"
        )
        message = await call_error(
            client,
            "memory_write",
            title="Bad claim",
            knowledge={"claim": {"key": "Has Spaces", "value": "x"}},
        )
        assert "invalid_input" in message and "claim" in message


# -- transports -------------------------------------------------------------------------------


STDIO_ENTRY = "from cairn.mcp_server import run_stdio_from_env; run_stdio_from_env()"


async def test_stdio_server_round_trip(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", STDIO_ENTRY],
        env={
            "HOME": str(tmp_path),
            "CAIRN_HOME": str(tmp_path / "home"),
            "CAIRN_VAULT": str(tmp_path / "vault"),
        },
    )
    async with Client(params) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        written = await call(client, "memory_write", **COURSE)
        found = await call(client, "memory_search", query="数据结构")
        assert [h["permalink"] for h in found["hits"]] == [written["permalink"]]
        read = await call(client, "memory_read", permalink=written["permalink"])
        assert "邓俊辉" in read["text"]
    assert list((tmp_path / "vault").rglob("*.md")), "the note was written to CAIRN_VAULT"


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


@pytest.fixture
def http_server(tmp_path: Path):
    """``serve_http`` in a child process on a port it picks (``port=0``); yields (url, token,
    stderr path). The URL is read from the banner, so the banner must name the port bound."""
    token = "test-token-" + os.urandom(8).hex()
    code = (
        "import sys; from cairn import Memory; from cairn.mcp_server import serve_http; "
        "serve_http(Memory.open(), port=0, token=sys.argv[1])"
    )
    env = os.environ | {
        "HOME": str(tmp_path),
        "CAIRN_HOME": str(tmp_path / "home"),
        "CAIRN_VAULT": str(tmp_path / "vault"),
    }
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", code, token], env=env, stderr=err)
    try:
        deadline = time.monotonic() + 20
        port = None
        while port is None or not _accepts(port):
            assert proc.poll() is None, log.read_text(encoding="utf-8")
            assert time.monotonic() < deadline, "server did not start"
            if found := re.search(r"URL: +http://127\.0\.0\.1:(\d+)/mcp", log.read_text("utf-8")):
                port = int(found[1])
                assert port != 0
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", token, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def test_http_server_requires_the_bearer_token(http_server) -> None:
    url, token, log = http_server
    banner = log.read_text(encoding="utf-8")
    assert url in banner and token in banner

    init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in (None, "Bearer wrong-token", f"Basic {token}", token):
        sent = headers | ({"Authorization": auth} if auth else {})
        response = httpx.post(url, json=init, headers=sent, timeout=10)
        assert response.status_code == 401, auth
        assert response.json()["error"] == "unauthorized"

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        written = await call(client, "memory_write", **TRIP)
        found = await call(client, "memory_search", query="kyoto")
        assert [h["permalink"] for h in found["hits"]] == [written["permalink"]]


# -- token and banner -------------------------------------------------------------------------


def test_token_is_created_private_and_reused(tmp_path: Path) -> None:
    home = tmp_path / "state"
    token = load_or_create_token(home)
    assert len(token) >= 40
    path = home / "mcp-token"
    assert path.read_text(encoding="utf-8").strip() == token
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(home) == token
    assert load_or_create_token(tmp_path / "other") != token
    assert [p.name for p in home.iterdir()] == ["mcp-token"], "no temporary file left behind"


def test_an_empty_token_file_is_replaced_and_the_new_token_kept(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir()
    (home / "mcp-token").write_text("", encoding="utf-8")
    token = load_or_create_token(home)
    assert (home / "mcp-token").read_text(encoding="utf-8").strip() == token
    assert load_or_create_token(home) == token  # the next start gives clients the same token


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_token_others_could_read_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "state"
    old = load_or_create_token(home)
    (home / "mcp-token").chmod(0o644)
    new = load_or_create_token(home)
    assert new != old
    assert (home / "mcp-token").read_text(encoding="utf-8").strip() == new
    assert stat.S_IMODE((home / "mcp-token").stat().st_mode) == 0o600
    assert "readable by other users" in capsys.readouterr().err
    assert load_or_create_token(home) == new  # private now: kept
    assert [p.name for p in home.iterdir()] == ["mcp-token"]


def test_banner_has_url_token_and_client_configs() -> None:
    banner = http_banner("127.0.0.1", 8765, "tok123")
    assert "http://127.0.0.1:8765/mcp" in banner
    assert '"Authorization": "Bearer tok123"' in banner
    assert (
        'claude mcp add --transport http cairn http://127.0.0.1:8765/mcp --header "Authorization: Bearer tok123"'
        in banner
    )
    assert '"serve"' in banner
    assert "WARNING" not in banner
    assert "WARNING" in http_banner("0.0.0.0", 8765, "tok123")
    assert "http://[::1]:9000/mcp" in http_banner("::1", 9000, "t")
