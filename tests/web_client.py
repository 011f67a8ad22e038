"""Helpers for the panel's fast tests: a Starlette TestClient on a real Memory, logged in or not."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from cairn import Memory
from cairn.web import panel_app

TOKEN = "test-token-1234567890"
BASE = "http://127.0.0.1:8765"


def client(memory: Memory, *, logged_in: bool = True, lang: str = "en") -> TestClient:
    c = TestClient(panel_app(memory, TOKEN), base_url=BASE, headers={"Accept-Language": lang})
    if logged_in:
        r = c.get(f"/?token={TOKEN}", follow_redirects=False)
        assert r.status_code == 303
    return c


def csrf_of(c: TestClient, page: str = "/inbox") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', c.get(page).text)
    assert found, "no CSRF token on the page"
    return found.group(1)
