"""Shared fixtures: every test gets its own vault and state directory; nothing touches ``~``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn import Memory

pytest_plugins = ["servers"]  # real wsgidav and S3 servers on 127.0.0.1, for stores and sync


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    monkeypatch.setenv("CAIRN_VAULT", str(tmp_path / "vault"))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    return home


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return tmp_path / "vault"


@pytest.fixture
def memory(vault: Path, isolated_home: Path) -> Iterator[Memory]:
    with Memory.open(vault, home=isolated_home, origin="test") as mem:
        yield mem
