"""The panel in headless Chromium (Debian's, driven by Playwright): log in by the link, every page
without a console error, search in Chinese and English, note an observation, edit and trash a
note, and the refusals a browser meets (no cookie, no CSRF token, a foreign Origin)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from browser import TOKEN, Console, Served, chromium, seed, serve
from cairn import Memory
from conflict_helpers import make_conflict


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as b:
        yield b


@pytest.fixture
def served(memory: Memory) -> Iterator[Served]:
    seed(memory)
    with serve(memory) as s:
        yield s


@pytest.fixture
def page(browser, served: Served) -> Iterator[tuple[object, Console]]:  # type: ignore[no-untyped-def]
    context = browser.new_context(extra_http_headers={"Accept-Language": "en-US,en;q=0.9"})
    p = context.new_page()
    console = Console()
    console.watch(p)
    yield p, console
    context.close()


def test_login_link_then_every_page_without_console_errors(page, served: Served) -> None:  # type: ignore[no-untyped-def]
    p, console = page
    p.goto(served.login)
    assert "token" not in p.url and urlsplit(p.url).path == "/"
    cookie = next(c for c in p.context.cookies() if c["name"] == "cairn_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    expect(p.get_by_role("link", name="Tea preferences")).to_be_visible()
    links = [a.get_attribute("href") for a in p.locator("header nav a").all()]
    assert "/inbox" in links and "/dream" in links
    for path in [*links, "/go/Tea%20preferences", "/search?q=tea"]:
        response = p.goto(served.url + path)
        assert response.status == 200, path
        assert p.locator("p.health").is_visible(), path
    p.goto(served.url + "/go/Tea%20preferences")
    p.get_by_role("link", name="Edit").click()
    assert p.locator("textarea#text").input_value().startswith("---")
    assert console.errors == []


def test_search_in_english_and_chinese_links_to_the_line(page, served: Served) -> None:  # type: ignore[no-untyped-def]
    p, console = page
    p.goto(served.login)
    p.goto(served.url + "/search")
    p.get_by_label("Search words").fill("sencha")
    p.get_by_role("button", name="Search").click()
    first = p.locator("ol.hits li").first
    expect(first).to_contain_text("Tea preferences")
    assert first.locator("mark").first.inner_text().lower() == "sencha"
    p.get_by_label("Search words").fill("明前茶")
    p.get_by_role("button", name="Search").click()
    hit = p.locator("ol.hits li a.title").first
    expect(hit).to_have_text("西湖龙井")
    expected = served.memory.search("明前茶")[0]
    assert hit.get_attribute("href").endswith(f"#L{expected.line}")
    hit.click()
    assert p.locator(".note .body :target, .note .body .target").first.inner_text().find("明前茶") >= 0
    assert console.errors == []


def test_note_an_observation_by_hand(page, served: Served) -> None:  # type: ignore[no-untyped-def]
    p, console = page
    p.goto(served.login)
    p.goto(served.url + "/inbox")
    p.get_by_label("Observation").fill("用户周五要去看牙医")
    p.get_by_label("Tags (space separated)").fill("提醒 health")
    p.get_by_label("Long-term (keep it)").check()
    p.get_by_role("button", name="Add to the inbox").click()
    expect(p.get_by_text("Added to the inbox.")).to_be_visible()
    expect(p.get_by_text("用户周五要去看牙医")).to_be_visible()
    obs = next(o for o in served.memory.dream_load()["observations"] if o["content"] == "用户周五要去看牙医")
    assert (obs["durable"], obs["source"], obs["tags"]) == (True, "panel", ["提醒", "health"])
    p.locator("ul.inbox li", has_text="用户周五要去看牙医").get_by_role("button", name="Drop").click()
    assert all(o["content"] != "用户周五要去看牙医" for o in served.memory.dream_load()["observations"])
    assert console.errors == []


def test_edit_with_a_change_meanwhile_then_trash_and_restore(page, served: Served) -> None:  # type: ignore[no-untyped-def]
    p, console = page
    memory = served.memory
    p.goto(served.login)
    p.goto(served.url + "/go/Tea%20preferences")
    p.get_by_role("link", name="Edit").click()
    box = p.locator("textarea#text")
    box.fill(box.input_value().replace("two minutes", "three minutes"))
    memory.edit("Tea preferences", "80 °C", "85 °C")  # another writer, while the page is open
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("alert")).to_contain_text("This note was changed")
    assert (
        "85 °C" in memory.read("Tea preferences").text and "three" not in memory.read("Tea preferences").text
    )
    p.get_by_role("button", name="Save").click()  # saved over the version now shown
    expect(p.get_by_text("Saved.")).to_be_visible()
    assert "three minutes" in memory.read("Tea preferences").text
    p.get_by_role("button", name="Move to trash").click()
    expect(p.get_by_role("button", name="Restore")).to_be_visible()
    p.get_by_role("button", name="Restore").click()
    expect(p.get_by_text("Restored.")).to_be_visible()
    assert memory.read("Tea preferences").title == "Tea preferences"
    assert [e for e in console.errors if "status of 409" not in e] == []  # the conflict page is a 409


def test_refusals_a_browser_meets(browser, served: Served) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    p = context.new_page()
    # no cookie: the login page, no data
    response = p.goto(served.url + "/search?q=tea")
    assert response.status == 401
    assert "Tea preferences" not in p.content() and p.get_by_label("Token").is_visible()
    # the token pasted into the login form logs in
    p.get_by_label("Token").fill(served.login.split("token=")[1])
    p.get_by_role("button", name="Log in").click()
    expect(p.get_by_role("link", name="Tea preferences")).to_be_visible()
    # a POST without the CSRF token, from the logged-in browser: refused, nothing written
    before = len(served.memory.dream_load()["observations"])
    status = p.evaluate(
        """async () => (await fetch('/observe', {method: 'POST',
            headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'text=forged'})).status"""
    )
    assert status == 403 and len(served.memory.dream_load()["observations"]) == before
    # a foreign Origin (what a page on another site sends): refused
    r = p.request.post(served.url + "/observe", headers={"Origin": "http://evil.example"}, form={"text": "x"})
    assert r.status == 403
    r = p.request.get(served.url + "/", headers={"Host": "evil.example"})
    assert r.status == 421 and "Tea preferences" not in r.text()
    context.close()


def _agent_edits_over_mcp(served: Served, permalink: str, find: str, replace: str) -> dict:
    """An agent's ``memory_edit`` through the served /mcp endpoint (the real SDK client over HTTP),
    in its own thread: Playwright's sync API holds this one."""
    import asyncio
    import threading

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from mcp_client import call

    async def run() -> dict:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http,
            Client(streamable_http_client(served.url + "/mcp", http_client=http)) as client,
        ):
            return await call(client, "memory_edit", permalink=permalink, find=find, replace=replace)

    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(asyncio.run(run())))
    thread.start()
    thread.join(30)
    return out


def test_an_agents_proposal_is_approved_in_the_page_and_a_stale_one_conflicts(page, served: Served) -> None:  # type: ignore[no-untyped-def]
    p, console = page
    memory = served.memory
    (memory.vault / "cairn.toml").write_text('write_mode = "propose"\n', encoding="utf-8")
    note = memory.read("Tea preferences")
    answer = _agent_edits_over_mcp(served, note.permalink, "likes sencha", "likes gyokuro")
    assert answer["status"] == "pending"
    before = (memory.vault / note.path).read_text(encoding="utf-8")
    assert "gyokuro" not in before  # waiting for a person
    p.goto(served.login)
    p.get_by_role("link", name="Proposals").click()
    card = p.locator(f"#p-{answer['proposal']}")
    expect(card.locator("pre.diff .add", has_text="[pref]")).to_have_text(
        "+- [pref] likes gyokuro in the morning #tea"
    )
    expect(card.locator("pre.diff .del", has_text="[pref]")).to_have_text(
        "-- [pref] likes sencha in the morning #tea"
    )
    card.get_by_role("button", name="Approve").click()
    expect(p.get_by_text("Approved and written.")).to_be_visible()
    assert "likes gyokuro" in (memory.vault / note.path).read_text(encoding="utf-8")
    # a second proposal whose note a person changes meanwhile: approval writes nothing
    stale = memory.propose("edit", note.permalink, "no sugar", "a little honey")["proposal"]
    memory.edit(note.permalink, "Green tea at", "Green tea (sencha) at")
    on_disk = (memory.vault / note.path).read_bytes()
    p.reload()
    p.locator(f"#p-{stale}").get_by_role("button", name="Approve").click()
    expect(p.locator(f"#p-{stale}")).to_contain_text("conflicted")
    expect(p.locator(f"#p-{stale} [role=alert]")).to_contain_text("Not written")
    assert (memory.vault / note.path).read_bytes() == on_disk
    # a POST without the CSRF token, from the logged-in page: refused, still pending
    third = memory.propose("edit", note.permalink, "no sugar", "no milk")["proposal"]
    status = p.evaluate(
        f"""async () => (await fetch('/proposals/decide', {{method: 'POST',
            headers: {{'Content-Type': 'application/x-www-form-urlencoded'}},
            body: 'id={third}&action=approve'}})).status"""
    )
    assert status == 403 and memory.proposal(third)["status"] == "pending"
    assert [e for e in console.errors if "status of 403" not in e] == []  # the refused fetch


def test_a_sync_conflict_is_settled_in_the_page(browser, tmp_path) -> None:  # type: ignore[no-untyped-def]
    memory, path, copy = make_conflict(
        tmp_path, title="会议", line="[时间] 周一", theirs="[时间] 周三", mine="[时间] 周五"
    )
    with memory, serve(memory) as s:
        context = browser.new_context(extra_http_headers={"Accept-Language": "en-US,en;q=0.9"})
        p = context.new_page()
        console = Console()
        console.watch(p)
        p.goto(s.login)
        expect(p.locator("p.health")).to_contain_text("1 sync conflicts")
        p.locator("p.health").get_by_role("link").click()
        conflict = p.locator("section.conflict")
        expect(conflict.locator("pre.diff .add")).to_have_text("+- [时间] 周三")
        box = conflict.get_by_label("Or merge by hand")
        box.fill(box.input_value().replace("- [时间] 周五", "- [时间] 周五\n- [备选] 周三"))
        conflict.get_by_role("button", name="Save merged text").click()
        expect(p.get_by_text("Conflict settled")).to_be_visible()
        expect(p.get_by_text("No conflicts.")).to_be_visible()
        text = (memory.vault / path).read_text(encoding="utf-8")
        assert "- [时间] 周五\n- [备选] 周三" in text and not (memory.vault / copy).exists()
        assert not (tmp_path / "remote" / copy).exists()  # the settled copy is gone for every device
        p.get_by_role("button", name="Sync now").click()
        expect(p.get_by_role("heading", name="Sync report")).to_be_visible()
        assert console.errors == []
        context.close()
