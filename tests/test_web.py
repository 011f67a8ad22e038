"""The web panel without a browser: login link, cookie, CSRF, Host/Origin, and each page's one
Memory call (TestClient on a real vault)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cairn import Memory
from cairn.errors import Conflict, SecretRefused
from cairn.mcp_http import http_app
from cairn.web import panel_app
from conflict_helpers import make_conflict
from scripted_model import ScriptedModel, consolidating_steps, serve
from web_client import BASE, TOKEN, client, csrf_of


@pytest.fixture
def noted(memory: Memory) -> Memory:
    memory.write(
        "Green tea", body="Brewed at 80 degrees.", tags=["drink"], observations=["[pref] likes sencha"]
    )
    memory.write("会议记录", body="周一讨论了西湖龙井的采购。", folder="work", tags=["会议"])
    memory.write("Private diary", body="sencha secret plans", sensitivity="sensitive")
    return memory


def test_without_cookie_the_login_page_and_no_data(noted: Memory) -> None:
    gt = noted.read("Green tea").permalink
    c = client(noted, logged_in=False)
    for path in ("/", "/search?q=tea", "/inbox", "/trash", "/dream", f"/edit/{gt}"):
        r = c.get(path)
        assert r.status_code == 401, path
        assert "Green tea" not in r.text and "sencha" not in r.text and "会议" not in r.text
        assert 'name="token"' in r.text


def test_login_link_sets_a_strict_httponly_cookie_and_drops_the_token(noted: Memory) -> None:
    c = client(noted, logged_in=False)
    r = c.get(f"/search?q=tea&token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/search?q=tea"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert TOKEN.lower() not in cookie
    page = c.get("/")
    assert page.status_code == 200 and "Green tea" in page.text


def test_a_wrong_token_starts_no_session(noted: Memory) -> None:
    c = client(noted, logged_in=False)
    r = c.get("/?token=wrong", follow_redirects=False)
    assert r.status_code == 401 and "set-cookie" not in r.headers
    assert c.get("/").status_code == 401


def test_a_forged_cookie_is_not_a_session(noted: Memory) -> None:
    c = client(noted, logged_in=False)
    c.cookies.set("cairn_session", "made-up")
    assert c.get("/").status_code == 401


def test_post_without_or_with_a_wrong_csrf_token_is_refused_and_writes_nothing(noted: Memory) -> None:
    c = client(noted)
    for data in ({"text": "sneaky"}, {"text": "sneaky", "csrf": "forged"}):
        r = c.post("/observe", data=data)
        assert r.status_code == 403
    assert noted.dream_load()["observations"] == []
    good = c.post("/observe", data={"text": "real one", "csrf": csrf_of(c)})
    assert good.status_code == 200
    assert [o["content"] for o in noted.dream_load()["observations"]] == ["real one"]


def test_csrf_token_belongs_to_its_session(noted: Memory) -> None:
    app = panel_app(noted, TOKEN)
    one, two = (TestClient(app, base_url=BASE) for _ in range(2))
    for c in (one, two):
        c.get(f"/?token={TOKEN}")
    r = two.post("/observe", data={"text": "cross", "csrf": csrf_of(one)})
    assert r.status_code == 403


def test_foreign_origin_or_host_is_refused_even_with_a_session(noted: Memory) -> None:
    c = client(noted)
    csrf = csrf_of(c)
    r = c.post("/observe", data={"text": "x", "csrf": csrf}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "Green tea" not in r.text
    r = c.get("/", headers={"Host": "evil.example:8765"})
    assert r.status_code == 421 and "Green tea" not in r.text
    r = c.get(f"/?token={TOKEN}", headers={"Host": "rebind.example"}, follow_redirects=False)
    assert r.status_code == 421 and "set-cookie" not in r.headers
    assert c.post("/observe", data={"text": "ok", "csrf": csrf}, headers={"Origin": BASE}).status_code == 200


def test_logout_ends_the_session(noted: Memory) -> None:
    c = client(noted)
    assert c.post("/logout", data={"csrf": csrf_of(c)}, follow_redirects=False).status_code == 303
    assert c.get("/").status_code == 401


def test_served_beside_mcp_one_token(noted: Memory) -> None:
    with TestClient(http_app(noted, TOKEN), base_url=BASE) as c:
        mcp = c.post("/mcp", json={})
        assert mcp.status_code == 401 and mcp.json()["error"] == "unauthorized"
        assert c.get("/").status_code == 401
        c.get(f"/?token={TOKEN}")
        assert "Green tea" in c.get("/").text


def test_notes_page_filters_newest_first(noted: Memory) -> None:
    c = client(noted)
    titles = re.findall(r'<td><a href="/note/[^"]+">([^<]+)</a>', c.get("/").text)
    assert titles == [n.title for n in noted.list(limit=200)]
    only = c.get("/?tag=会议").text
    assert "会议记录" in only and "Green tea" not in only
    assert "Green tea" not in c.get("/?folder=work").text


def test_a_note_rendered_safely_with_backlinks(memory: Memory) -> None:
    memory.write(
        "Hostile",
        body="<script>alert(1)</script>\n\n[click](javascript:alert(2)) [ok](https://example.org)",
        relations=["relates_to [[Target note]]"],
    )
    target_note = memory.write("Target note", body="here")
    hostile = memory.read("Hostile")
    c = client(memory)
    page = c.get(f"/note/{hostile.permalink}").text
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert 'href="javascript:' not in page and 'href="https://example.org"' in page
    assert 'href="/go/Target%20note"' in page
    assert "user/Hostile.md" in page
    target = c.get(f"/note/{target_note.permalink}").text
    assert f'href="/note/{hostile.permalink}?scope=user"' in target  # the backlink


def test_edit_saves_with_the_version_checked(noted: Memory) -> None:
    gt = noted.read("Green tea").permalink
    c = client(noted)
    note = noted.read(gt)
    page = c.get(f"/edit/{gt}").text
    version = re.search(r'name="version" value="([^"]+)"', page).group(1)
    assert version == note.version
    r = c.post(
        f"/save/{gt}",
        data={"csrf": csrf_of(c), "scope": "user", "version": version, "text": note.text.replace("80", "75")},
    )
    assert r.status_code == 200 and "75 degrees" in noted.read(gt).body


def test_edit_of_a_note_changed_meanwhile_overwrites_nothing_and_shows_both(
    noted: Memory, vault: Path
) -> None:
    gt = noted.read("Green tea").permalink
    c = client(noted)
    stale = noted.read(gt)
    noted.edit(gt, "80 degrees", "85 degrees")  # someone else, meanwhile
    mine = stale.text.replace("80 degrees", "70 degrees")
    r = c.post(
        f"/save/{gt}", data={"csrf": csrf_of(c), "scope": "user", "version": stale.version, "text": mine}
    )
    assert r.status_code == 409
    assert "85 degrees" in r.text and "70 degrees" in r.text
    assert "85 degrees" in (vault / "user/Green tea.md").read_text(encoding="utf-8")


def test_replace_text_is_compare_and_swap(noted: Memory) -> None:
    gt = noted.read("Green tea").permalink
    note = noted.read(gt)
    with pytest.raises(Conflict):
        noted.replace_text(gt, note.text + "\nmore\n", "sha256:0")
    with pytest.raises(SecretRefused):
        noted.replace_text(gt, note.text + "\napi key sk-proj-" + "a1B2c3D4" * 6 + "\n", note.version)
    assert noted.read(gt).text == note.text


def test_delete_to_trash_and_restore(noted: Memory) -> None:
    gt = noted.read("Green tea").permalink
    c = client(noted)
    csrf = csrf_of(c)
    r = c.post(f"/delete/{gt}", data={"csrf": csrf, "scope": "user", "reason": "old"})
    assert r.status_code == 200 and "Green tea" in r.text  # the trash lists it
    assert "Green tea" not in c.get("/").text
    assert [n.permalink for n in noted.trash()] == [gt]
    r = c.post("/restore", data={"csrf": csrf, "scope": "user", "permalink": gt})
    assert r.status_code == 200 and noted.read(gt).title == "Green tea"
    assert noted.trash() == []


def test_observe_by_hand_long_term_or_neutral(noted: Memory, vault: Path) -> None:
    c = client(noted)
    csrf = csrf_of(c)
    c.post("/observe", data={"csrf": csrf, "text": "prefers oolong", "tags": "#drink pref", "durable": "1"})
    c.post("/observe", data={"csrf": csrf, "text": "maybe jasmine"})
    by_text = {o["content"]: o for o in noted.dream_load()["observations"]}
    assert by_text["prefers oolong"]["durable"] is True and by_text["prefers oolong"]["tags"] == [
        "drink",
        "pref",
    ]
    assert by_text["maybe jasmine"]["durable"] is None
    assert {o["source"] for o in by_text.values()} == {"panel"}
    page = c.get("/inbox").text
    assert "prefers oolong" in page and "maybe jasmine" in page


def test_inbox_archive_and_drop_by_hand(noted: Memory, vault: Path) -> None:
    keep = noted.observe("keep this")["id"]
    drop = noted.observe("drop this")["id"]
    c = client(noted)
    csrf = csrf_of(c)
    c.post("/inbox/settle", data={"csrf": csrf, "id": keep, "action": "archive"})
    c.post("/inbox/settle", data={"csrf": csrf, "id": drop, "action": "drop"})
    assert noted.dream_load()["observations"] == []
    archived = {p.name: p.read_text(encoding="utf-8") for p in (vault / "user/inbox/archived").glob("*.md")}
    assert "outcome: archived" in archived[f"{keep}.md"] and "outcome: dropped" in archived[f"{drop}.md"]
    assert "dropped by hand" in (vault / "user/log.md").read_text(encoding="utf-8")
    again = c.post("/inbox/settle", data={"csrf": csrf, "id": keep, "action": "drop"})
    assert again.status_code == 404


def test_search_gives_cairn_search_results_marked(noted: Memory) -> None:
    c = client(noted)
    for query in ("sencha", "龙井采购", "tea"):
        page = c.get("/search", params={"q": query}).text
        shown = re.findall(r'class="title" href="/note/([^"?]+)', page)
        from urllib.parse import unquote

        assert [unquote(p) for p in shown] == [h.permalink for h in noted.search(query)], query
    page = c.get("/search", params={"q": "龙井采购"}).text
    assert "<mark>龙井</mark>" in page and "#L" in page
    assert "Private diary" not in c.get("/search", params={"q": "sencha"}).text
    assert "Private diary" in c.get("/search", params={"q": "sencha", "sensitive": "1"}).text


def test_search_filters_are_chips_that_can_be_removed(noted: Memory) -> None:
    c = client(noted)
    page = c.get("/search", params={"q": "tea", "tag": "drink"}).text
    assert 'class="chip filter"' in page and "tag: drink" in page
    assert re.search(r'class="chip filter" href="/search\?q=tea"', page)


def test_chinese_by_accept_language(noted: Memory) -> None:
    zh = client(noted, lang="zh-CN,zh;q=0.9,en;q=0.8")
    assert "搜索" in zh.get("/search").text and "收件箱" in zh.get("/inbox").text
    en = client(noted, lang="en-US,en;q=0.9,zh;q=0.5")
    assert "Inbox" in en.get("/inbox").text and "收件箱" not in en.get("/inbox").text


def test_every_page_is_in_the_navigation(noted: Memory) -> None:
    page = client(noted).get("/").text
    for path in ("/", "/search", "/inbox", "/proposals", "/dream", "/sync"):
        assert f'href="{path}"' in page, path


def test_proposals_page_approves_and_rejects_by_panel(noted: Memory) -> None:
    gt = noted.read("Green tea")
    one = noted.propose("edit", gt.permalink, "likes sencha", "likes gyokuro")["proposal"]
    two = noted.propose("write", "Oolong", body="Roasted.")["proposal"]
    c = client(noted)
    page = c.get("/proposals").text
    assert '<span class="del">-- [pref] likes sencha</span>' in page
    assert '<span class="add">+- [pref] likes gyokuro</span>' in page
    assert page.count('name="action" value="approve"') == 2
    csrf = csrf_of(c, "/proposals")
    assert c.post("/proposals/decide", data={"id": one, "action": "approve"}).status_code == 403
    assert "gyokuro" not in noted.read("Green tea").text  # refused without CSRF: nothing written
    done = c.post("/proposals/decide", data={"csrf": csrf, "id": one, "action": "approve"})
    assert done.status_code == 200 and "Approved and written." in done.text
    assert "likes gyokuro" in (noted.vault / gt.path).read_text(encoding="utf-8")
    c.post("/proposals/decide", data={"csrf": csrf, "id": two, "action": "reject", "why": "不需要"})
    decided = {p["id"]: p for p in noted.proposals()}
    assert (decided[one]["status"], decided[one]["decided_by"]) == ("approved", "panel")
    assert (decided[two]["status"], decided[two]["why"], decided[two]["decided_by"]) == (
        "rejected",
        "不需要",
        "panel",
    )
    page = c.get("/proposals?status=rejected").text
    assert "不需要" in page and "Oolong" in page and "user/Green tea.md" not in page


def test_proposals_page_marks_conflicted_and_expired(noted: Memory) -> None:
    gt = noted.read("Green tea")
    stale = noted.propose("edit", gt.permalink, "80 degrees", "85 degrees")["proposal"]
    old = noted.propose("write", "Late idea", body="too late")["proposal"]
    noted.edit(gt.permalink, "80 degrees", "70 degrees")  # a person's change meanwhile
    proposal_file = noted.vault / noted.proposal(old)["path"]  # its clock runs out: expiry in the past
    text = proposal_file.read_text(encoding="utf-8")
    proposal_file.write_text(
        re.sub(r"expires: .*", "expires: '2020-01-01T00:00:00+00:00'", text), encoding="utf-8"
    )
    c = client(noted)
    csrf = csrf_of(c, "/proposals")
    page = c.post("/proposals/decide", data={"csrf": csrf, "id": stale, "action": "approve"}).text
    assert "Not written: the note changed after it was proposed." in page
    assert "70 degrees" in (noted.vault / gt.path).read_text(encoding="utf-8")
    assert re.search(rf'id="p-{stale}".*?conflicted', page, re.S)
    assert re.search(rf'id="p-{old}".*?expired.*?can no longer be approved', page, re.S)
    assert page.count('name="action" value="approve"') == 0


def test_sync_page_without_a_remote_says_so_and_sync_now_fails_in_one_line(noted: Memory) -> None:
    c = client(noted)
    page = c.get("/sync").text
    assert "No remote" in page and "No conflicts." in page
    r = c.post("/sync/now", data={"csrf": csrf_of(c, "/sync")})
    assert r.status_code == 200 and "Sync failed: this vault has no remote" in r.text
    assert "Traceback" not in r.text


def test_sync_page_shows_a_conflict_and_keeps_theirs(tmp_path: Path) -> None:
    memory, path, copy = make_conflict(tmp_path)
    with memory:
        c = client(memory)
        page = c.get("/sync").text
        remote = (tmp_path / "remote").as_uri()
        assert remote in page and "Waiting to upload" in page
        assert copy in page and '<span class="del">-- [when] Friday</span>' in page
        assert '<span class="add">+- [when] Wednesday</span>' in page
        assert "1 sync conflicts" in page  # the health line
        csrf = csrf_of(c, "/sync")
        version = re.search(r'name="version" value="([^"]+)"', page)[1]
        r = c.post("/sync/resolve", data={"csrf": csrf, "path": copy, "keep": "theirs", "version": version})
        assert r.status_code == 200 and "Conflict settled" in r.text and "No conflicts." in r.text
        assert "Wednesday" in (memory.vault / path).read_text(encoding="utf-8")
        assert not (memory.vault / copy).exists()
        bad = c.post("/sync/resolve", data={"csrf": csrf, "path": path, "keep": "mine"})
        assert bad.status_code == 400 and "not a conflict copy" in bad.text
        assert (memory.vault / path).exists()


def test_sync_page_a_merge_over_a_changed_note_is_refused_and_shown_again(tmp_path: Path) -> None:
    memory, path, copy = make_conflict(tmp_path)
    with memory:
        c = client(memory)
        page = c.get("/sync").text
        csrf = csrf_of(c, "/sync")
        version = re.search(r'name="version" value="([^"]+)"', page)[1]
        memory.append(memory.read(path).permalink, "[note] added meanwhile")
        r = c.post(
            "/sync/resolve",
            data={"csrf": csrf, "path": copy, "keep": "merged", "text": "merged", "version": version},
        )
        assert r.status_code == 409 and "The note changed since this page was shown" in r.text
        assert "added meanwhile" in r.text  # the note as it is now, to look at again
        assert "added meanwhile" in (memory.vault / path).read_text(encoding="utf-8")
        assert (memory.vault / copy).exists()


def test_dream_page_switch_and_log(noted: Memory) -> None:
    c = client(noted)
    csrf = csrf_of(c)
    assert "The dream is off" in c.get("/dream").text
    c.post("/dream/switch", data={"csrf": csrf, "action": "on"})
    assert noted.dream_status()["enabled"] is True
    c.post(
        "/dream/switch",
        data={"csrf": csrf, "action": "settings", "model": "m1", "daily_at": "03:30", "base_url": ""},
    )
    status = noted.dream_status()
    assert (status["model"], status["daily_at"]) == ("m1", "03:30")
    oid = noted.observe("a durable fact", durable=True)["id"]
    noted.dream_apply([{"kind": "drop_observation", "observation": oid, "reason": "test"}], "tidy up")
    page = c.get("/dream").text
    assert "tidy up" in page and "drop_observation" in page
    bad = c.post("/dream/switch", data={"csrf": csrf, "action": "settings", "daily_at": "25:99"})
    assert bad.status_code == 400


def test_dream_run_now_shows_its_outcome(noted: Memory) -> None:
    c = client(noted)
    csrf = csrf_of(c)
    refused = c.post("/dream/run", data={"csrf": csrf})
    assert refused.status_code == 400 and "dream" in refused.text.lower()  # off: said so on the page
    noted.observe("prefers dark mode", durable=True)
    with serve(ScriptedModel(consolidating_steps())) as model:
        noted.dream_switch(True, model="scripted", base_url=model.url)
        page = c.post("/dream/run", data={"csrf": csrf})
    assert page.status_code == 200
    assert "applied 1, failed 0" in page.text and "promote_observation: applied" in page.text
    assert "prefers dark mode" in noted.projection()["text"]
    assert noted.dream_status()["last_status"] == "ok"
