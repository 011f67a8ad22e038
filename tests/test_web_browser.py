"""The panel in headless Chromium (Debian's, driven by Playwright): log in by the link, every page
without a console error, search in Chinese and English, note an observation, edit and trash a
note, and the refusals a browser meets (no cookie, no CSRF token, a foreign Origin)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from browser import Console, Served, chromium, seed, serve
from cairn import Memory


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
