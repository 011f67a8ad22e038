"""Headless Chromium on the real panel: a server fixture and a browser fixture for the tests, and
``python -m tests.browser --screenshots`` to write docs/screenshots/*.png.

The server is the one ``cairn serve --http`` runs (``mcp_http.http_app``: panel and /mcp on one
port) under uvicorn in a thread on 127.0.0.1. Chromium is Debian's (``apt-get install chromium``),
driven by Playwright through ``executable_path``; Playwright's own browser download is never used.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cairn import Memory
from cairn.mcp_http import http_app
from cairn.web import login_link

TOKEN = "browser-test-token-0123456789"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


@dataclass
class Served:
    memory: Memory
    url: str  # http://127.0.0.1:PORT
    login: str  # the login link the banner prints


@contextmanager
def serve(memory: Memory) -> Iterator[Served]:
    """The panel and /mcp for ``memory`` on a free loopback port, until the block ends."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(http_app(memory, TOKEN), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the panel's server did not start")
        time.sleep(0.02)
    try:
        yield Served(memory, f"http://127.0.0.1:{port}", login_link("127.0.0.1", port, TOKEN))
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("Chromium is missing: `apt-get install -y chromium` (make test does it)")
    return found


@dataclass
class Console:
    """Errors a page logged or threw, gathered while a test drives it."""

    errors: list[str] = field(default_factory=list)

    def watch(self, page) -> None:  # type: ignore[no-untyped-def]
        page.on(
            "console",
            lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text} {msg.location}"),
        )
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))


@contextmanager
def chromium() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser
        finally:
            browser.close()


def seed(memory: Memory) -> None:
    """A small vault in English and Chinese, with an inbox and a dream log, for tests and screenshots."""
    memory.write(
        "Tea preferences",
        body="Brewing notes for the teas I drink most.\n\nGreen tea at **80 °C**, two minutes.",
        tags=["drink", "preference"],
        type="preference",
        observations=["[pref] likes sencha in the morning #tea", "[fact] no sugar, ever"],
        relations=["relates_to [[西湖龙井]]"],
    )
    memory.write(
        "西湖龙井",
        body="产自杭州西湖一带的绿茶。\n\n每年清明前采摘的明前茶最好。",
        folder="knowledge",
        tags=["茶", "绿茶"],
        observations=["[事实] 用 80 度的水冲泡 #茶"],
    )
    memory.write(
        "Project Cairn roadmap",
        body="Ship the web panel, then sync.\n\n| month | goal |\n|---|---|\n| Nov | panel |\n| Dec | sync |",
        folder="work",
        type="project",
        tags=["work"],
        relations=["uses [[Tea preferences]]"],
    )
    memory.write("周会记录 2026-11-30", body="讨论了面板的搜索页和收件箱。", folder="work", tags=["会议"])
    memory.observe(
        "The user asked to be reminded about the dentist on Friday", tags=["reminder"], source="agent"
    )
    memory.observe("用户更喜欢简短的回答", tags=["偏好"], durable=True, source="panel")
    memory.dream_switch(True, model="local-model", daily_at="03:30")
    oid = memory.observe("likes oolong too", durable=False, source="agent")["id"]
    memory.dream_apply(
        [{"kind": "drop_observation", "observation": oid, "reason": "not a stable fact"}],
        "Nightly tidy-up: one passing remark dropped.",
    )


def seed_proposals(memory: Memory) -> None:
    """Two changes an agent asked for in approval mode, waiting for a person (the edit newest)."""
    (memory.vault / "cairn.toml").write_text('write_mode = "propose"\n', encoding="utf-8")
    memory.propose(
        "write",
        "Dentist",
        body="Appointments and what the dentist said.",
        observations=["[appointment] Friday 15:00 at Dr. Lin's #health"],
        tags=["health"],
        via="mcp",
    )
    time.sleep(1.1)  # proposals are listed newest first, to the second
    memory.propose(
        "edit", memory.read("西湖龙井").permalink, "用 80 度的水冲泡", "用 75 到 80 度的水冲泡", via="mcp"
    )


def conflicted_vault(tmp: Path) -> Memory:
    """A vault on a folder remote (``file://``) with one sync conflict: the phone and the laptop
    moved the same meeting; the laptop (served) kept its time, the phone's note is the copy."""
    if str(Path(__file__).parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).parent))  # run as ``python -m tests.browser``
    from conflict_helpers import make_conflict

    memory, _, _ = make_conflict(
        tmp,
        title="Weekly sync",
        body="The team meeting, and who brings what.",
        line="[when] Monday 10:00 in room 4",
        theirs="[when] Wednesday 10:00 in room 4",
        mine="[when] Tuesday 14:00 online",
        names=("phone", "laptop"),
    )
    return memory


PAGES = {
    "notes": "/",
    "note": "/go/Tea%20preferences",
    "search-en": "/search?q=green+tea",
    "search-zh": "/search?q=%E9%BE%99%E4%BA%95",
    "inbox": "/inbox",
    "proposals": "/proposals",
    "dream": "/dream",
    "sync": "/sync",
    "trash": "/trash",
    "edit": None,  # found from the note page
}


LONG = {"proposals", "sync"}  # taken whole: the point is the diff and the buttons under it


def screenshots(out: Path = SCREENSHOTS) -> list[Path]:
    """Seed a vault in a temporary folder, serve it, and save a PNG of each page in ``out``."""
    import tempfile

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = conflicted_vault(Path(tmp))
        seed(memory)
        seed_proposals(memory)
        with serve(memory) as served, chromium() as browser:
            for lang in ("en", "zh"):
                context = browser.new_context(  # type: ignore[attr-defined]
                    locale="zh-CN" if lang == "zh" else "en-US",
                    extra_http_headers={
                        "Accept-Language": "zh-CN,zh;q=0.9" if lang == "zh" else "en-US,en;q=0.9"
                    },
                    viewport={"width": 1100, "height": 760},
                )
                page = context.new_page()
                page.goto(served.login)
                for name, path in PAGES.items():
                    if path is None:
                        page.goto(served.url + PAGES["note"])
                        page.get_by_role("link", name="Edit" if lang == "en" else "编辑").click()
                    else:
                        page.goto(served.url + path)
                    target = out / f"{name}-{lang}.png"
                    page.screenshot(path=str(target), full_page=name in LONG)
                    written.append(target)
                context.close()
        memory.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.browser", description="Screenshots of the web panel.")
    ap.add_argument("--screenshots", action="store_true", help="write docs/screenshots/*.png")
    ap.add_argument("--out", type=Path, default=SCREENSHOTS)
    args = ap.parse_args(argv)
    if not args.screenshots:
        ap.print_help()
        return 2
    for path in screenshots(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
