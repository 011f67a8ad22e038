"""The Seafile store against the in-process emulator of Seafile's Web API (tests/seafile_emulator.py),
and against a real server when SEAFILE_URL, SEAFILE_TOKEN and SEAFILE_REPO are set."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

from cairn.stores import AuthFailed, PreconditionFailed, Store, StoreError, open_store
from cairn.stores.seafile import SeafileStore
from faulty_proxy import FaultyProxy
from seafile_emulator import EMPTY_ID, SeafileEmulator
from store_contract import StoreContract, listing


@pytest.fixture(scope="module")
def seafile() -> Iterator[SeafileEmulator]:
    emulator = SeafileEmulator().start()
    yield emulator
    emulator.stop()


@pytest.fixture
def repo(seafile: SeafileEmulator) -> str:
    return seafile.new_repo()


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cairn.stores.retry.BASE_DELAY", 0.005)


def remote(seafile: SeafileEmulator, repo: str, base: str = "vault") -> str:
    return f"seafile+http://127.0.0.1:{seafile.port}/{repo}/{base}"


class TestSeafileStore(StoreContract):
    @pytest.fixture
    def store(self, seafile: SeafileEmulator, repo: str) -> Iterator[Store]:
        store = open_store(remote(seafile, repo), token=seafile.token_for("cairn@example.com"))
        yield store
        store.close()

    @pytest.fixture
    def other(self, seafile: SeafileEmulator, repo: str) -> Iterator[Store]:
        store = open_store(remote(seafile, repo), user="cairn@example.com", password="secret")
        yield store
        store.close()


real = pytest.mark.skipif(
    not all(os.environ.get(v) for v in ("SEAFILE_URL", "SEAFILE_TOKEN", "SEAFILE_REPO")),
    reason="no real Seafile server: set SEAFILE_URL, SEAFILE_TOKEN and SEAFILE_REPO to run the contract on one",
)


@real
class TestRealSeafileServer(StoreContract):
    """The same contract on a real server, each test in a fresh folder of the given library."""

    @pytest.fixture
    def folder(self) -> str:
        return f"cairn-contract-{uuid.uuid4().hex[:8]}"

    def _open(self, folder: str) -> SeafileStore:
        server = os.environ["SEAFILE_URL"].rstrip("/")
        return SeafileStore(server, os.environ["SEAFILE_REPO"], folder, token=os.environ["SEAFILE_TOKEN"])

    @pytest.fixture
    def store(self, folder: str) -> Iterator[Store]:
        store = self._open(folder)
        yield store
        for entry in list(store.list()):
            store.delete(entry.path)
        store.close()

    @pytest.fixture
    def other(self, folder: str) -> Iterator[Store]:
        store = self._open(folder)
        yield store
        store.close()


def test_a_refresh_with_nothing_changed_costs_one_request(seafile: SeafileEmulator, repo: str) -> None:
    store = open_store(remote(seafile, repo), token=seafile.token_for("cairn@example.com"))
    for i in range(60):
        store.write(f"d{i % 6}/sub{i % 2}/n{i}.md", b"x" * i)
    first = listing(store)
    before = store.requests
    assert listing(store) == first
    assert store.requests - before == 1
    # A change three folders down costs the root, the changed folder's parents and itself.
    seafile.put(repo, "vault/d3/sub1/n3.md", b"edited on the web page")
    before = store.requests
    changed = listing(store)
    assert store.requests - before == 3
    assert changed["d3/sub1/n3.md"].version != first["d3/sub1/n3.md"].version
    assert {p: e for p, e in changed.items() if p != "d3/sub1/n3.md"} == {
        p: e for p, e in first.items() if p != "d3/sub1/n3.md"
    }
    store.close()


def test_file_ids_are_content_fingerprints(seafile: SeafileEmulator, repo: str) -> None:
    store = open_store(remote(seafile, repo), token=seafile.token_for("cairn@example.com"))
    a = store.write("a.md", b"same bytes")
    b = store.write("b.md", b"same bytes")
    assert a == b
    assert store.write("empty.md", b"") == EMPTY_ID
    store.close()


def test_create_only_clash_deletes_the_servers_copy(seafile: SeafileEmulator, repo: str) -> None:
    store = open_store(remote(seafile, repo), token=seafile.token_for("cairn@example.com"))
    seafile.put(repo, "vault/notes/taken.md", b"someone else's")
    with pytest.raises(PreconditionFailed):
        store.write("notes/taken.md", b"mine", create_only=True)
    assert sorted(listing(store)) == ["notes/taken.md"]
    assert store.read("notes/taken.md").data == b"someone else's"
    assert any(c.startswith("DELETE") for c in seafile.calls)
    store.close()


def test_429_retry_after_is_honoured(seafile: SeafileEmulator, repo: str) -> None:
    store = open_store(remote(seafile, repo), token=seafile.token_for("cairn@example.com"))
    seafile.throttle(1, retry_after="1")
    started = time.monotonic()
    store.write("a.md", b"a")
    assert time.monotonic() - started >= 1.0
    assert store.read("a.md").data == b"a"
    store.close()


def test_a_revoked_token_logs_in_again_with_the_password(seafile: SeafileEmulator, repo: str) -> None:
    store = SeafileStore(seafile.url, repo, "vault", user="cairn@example.com", password="secret")
    store.write("a.md", b"a")
    for token in list(seafile.tokens):
        seafile.revoke(token)
    assert store.read("a.md").data == b"a"
    store.close()


def test_a_revoked_api_token_is_auth_failed_with_how_to_renew(seafile: SeafileEmulator, repo: str) -> None:
    token = seafile.token_for("cairn@example.com")
    store = open_store(remote(seafile, repo), token=token)
    store.write("a.md", b"a")
    seafile.revoke(token)
    # (An upload link fetched before the revocation is a fileserver token of its own and may
    # still work, as on a real server; a write to a new folder needs a new one.)
    calls = (lambda: list(store.list()), lambda: store.read("a.md"), lambda: store.write("new/b.md", b"b"))
    for call in calls:
        with pytest.raises(AuthFailed, match="Renew it"):
            call()
    store.close()
    with pytest.raises(AuthFailed, match="user name or password"):
        list(open_store(remote(seafile, repo), user="cairn@example.com", password="wrong").list())


def test_faults_are_retried_and_nothing_is_lost(
    quick_backoff: None, seafile: SeafileEmulator, repo: str
) -> None:
    with FaultyProxy(seafile.url, share=0.3, seed=5, kinds=("503", "429", "drop")) as proxy:
        # Download and upload links name the emulator itself, so only API calls cross the proxy.
        store = SeafileStore(proxy.url, repo, "vault", token=seafile.token_for("cairn@example.com"))
        for i in range(15):
            version = store.write(f"n/{i}.md", f"note {i}".encode(), create_only=True)
            store.write(f"n/{i}.md", f"note {i} edited".encode(), if_version=version)
        assert proxy.faults.total() >= 5
        found = listing(store)
        assert sorted(found) == sorted(f"n/{i}.md" for i in range(15))
        assert all(store.read(p).data.endswith(b" edited") for p in found)
        store.close()


@pytest.mark.parametrize("url", ["seafile://", "seafile://host", "seafile+http:///repo"])
def test_bad_seafile_urls_are_one_line_errors(url: str) -> None:
    with pytest.raises(StoreError, match="seafile://host/LIBRARY_ID"):
        open_store(url, token="t")


def test_credentials_are_required() -> None:
    with pytest.raises(AuthFailed, match="token"):
        open_store("seafile://host/repo-id")
