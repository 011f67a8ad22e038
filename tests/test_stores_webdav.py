"""The WebDAV store against a real wsgidav server on 127.0.0.1, directly and through faults."""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import pytest

from cairn.stores import AuthFailed, PreconditionFailed, Store, StoreError, Unreachable, open_store
from cairn.stores.webdav import WebDavStore
from faulty_proxy import FaultyProxy
from servers import DavServer
from store_contract import StoreContract, listing


class TestWebDavStore(StoreContract):
    @pytest.fixture
    def store(self, dav_server: DavServer, dav_remote: str) -> Store:
        store = open_store(dav_remote, user=dav_server.user, password=dav_server.password)
        yield store
        store.close()

    @pytest.fixture
    def other(self, dav_server: DavServer, dav_remote: str) -> Store:
        store = open_store(dav_remote, user=dav_server.user, password=dav_server.password)
        yield store
        store.close()


@pytest.fixture(scope="module")
def careless_server(tmp_path_factory: pytest.TempPathFactory) -> DavServer:
    server = DavServer(root=tmp_path_factory.mktemp("careless"), honour_conditions=False).start()
    yield server
    server.stop()


class TestWebDavCheckThenWrite(StoreContract):
    """The same contract on a server that ignores If-Match / If-None-Match."""

    @pytest.fixture
    def store(self, careless_server: DavServer) -> Store:
        store = open_store(careless_server.remote("shared"), user="cairn", password=careless_server.password)
        assert store.native_cas is False
        yield store
        store.close()

    @pytest.fixture
    def other(self, store: Store, careless_server: DavServer) -> Store:
        other = open_store(careless_server.remote("shared"), user="cairn", password=careless_server.password)
        yield other
        other.close()

    @pytest.fixture(autouse=True)
    def empty(self, careless_server: DavServer) -> None:
        for path in (careless_server.root / "shared").glob("*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cairn.stores.retry.BASE_DELAY", 0.005)


class Opener:
    """open_store for a test, closing every store it opened when the test ends."""

    def __init__(self) -> None:
        self.stores: list[Store] = []

    def __call__(self, url: str, **credentials: str) -> Store:
        return self.track(open_store(url, **credentials))

    def track(self, store: Store) -> Store:
        self.stores.append(store)
        return store


@pytest.fixture
def opened() -> Opener:
    opener = Opener()
    yield opener
    for store in opener.stores:
        store.close()


def test_wsgidav_honours_conditions_natively(opened: Opener, dav_server: DavServer, dav_remote: str) -> None:
    store = opened(dav_remote, user=dav_server.user, password=dav_server.password)
    assert store.native_cas is True
    assert listing(store) == {}  # the probe file is gone
    assert list((dav_server.root / dav_remote.rsplit("/", 1)[1]).iterdir()) == []


def test_if_match_on_a_deleted_file_does_not_bring_it_back(
    opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    # wsgidav, like some real servers, ignores If-Match when the file is missing and creates it.
    store = opened(dav_remote, user=dav_server.user, password=dav_server.password)
    version = store.write("n.md", b"one")
    store.delete("n.md")
    with pytest.raises(PreconditionFailed):
        store.write("n.md", b"resurrected?", if_version=version)
    assert listing(store) == {}


def test_a_wrong_password_is_auth_failed_with_how_to_renew(
    opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    store = opened(dav_remote, user=dav_server.user, password="wrong")
    for call in (lambda: list(store.list()), lambda: store.read("x.md"), lambda: store.write("x.md", b"x")):
        with pytest.raises(AuthFailed, match="cairn remote set") as info:
            call()
        assert "\n" not in info.value.message
    assert store.requests <= 3  # refused at once, never retried


def test_a_closed_port_is_unreachable_at_once(opened: Opener) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = opened(f"webdav://127.0.0.1:{port}/dav/x", user="u", password="p")
    started = time.monotonic()
    with pytest.raises(Unreachable):
        list(store.list())
    with pytest.raises(Unreachable):
        store.read("a.md")
    assert time.monotonic() - started < 5


def test_bad_webdav_urls_are_one_line_errors(opened: Opener) -> None:
    with pytest.raises(StoreError, match="webdav"):
        opened("webdav:///no-host")


def test_faults_are_retried_and_nothing_is_lost_or_doubled(
    quick_backoff: None, opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    folder = dav_remote.split("/dav/", 1)[1]
    with FaultyProxy(f"http://127.0.0.1:{dav_server.port}", share=0.4, seed=7, max_in_row=2) as proxy:
        url = f"webdav://127.0.0.1:{proxy.port}/dav/{folder}"
        store = opened(url, user=dav_server.user, password=dav_server.password)
        other = opened(url, user=dav_server.user, password=dav_server.password)
        for i in range(30):
            path = f"notes/{i % 5}/n{i}.md"
            version = store.write(path, f"note {i}\n".encode(), create_only=True)
            store.write(path, f"note {i} edited\n".encode(), if_version=version)
        for i in range(0, 30, 3):
            other.move(f"notes/{i % 5}/n{i}.md", f"moved/n{i}.md")
        for i in range(1, 30, 3):
            other.delete(f"notes/{i % 5}/n{i}.md")
        found = listing(store)
        assert proxy.faults.total() >= 20, proxy.faults
        assert set(proxy.faults) == {"503", "429", "drop", "drop_after", "truncate"}
    expected = {f"moved/n{i}.md" for i in range(0, 30, 3)} | {
        f"notes/{i % 5}/n{i}.md" for i in range(30) if i % 3 == 2
    }
    assert set(found) == expected
    on_disk = Path(dav_server.root, folder)
    for path in expected:
        i = int(path.rsplit("n", 1)[1].removesuffix(".md"))
        assert (on_disk / path).read_bytes() == f"note {i} edited\n".encode()


def test_a_revoked_credential_through_the_proxy_is_auth_failed(
    opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    folder = dav_remote.split("/dav/", 1)[1]
    with FaultyProxy(f"http://127.0.0.1:{dav_server.port}", share=0.0) as proxy:
        store = opened(
            f"webdav://127.0.0.1:{proxy.port}/dav/{folder}", user="cairn", password=dav_server.password
        )
        store.write("a.md", b"a")
        proxy.auth_revoked = True
        with pytest.raises(AuthFailed):
            store.write("a.md", b"b")
        proxy.auth_revoked = False
        assert store.read("a.md").data == b"a"


def test_an_outage_is_unreachable_after_bounded_retries(
    quick_backoff: None, opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    folder = dav_remote.split("/dav/", 1)[1]
    with FaultyProxy(f"http://127.0.0.1:{dav_server.port}", share=0.0) as proxy:
        store = opened(
            f"webdav://127.0.0.1:{proxy.port}/dav/{folder}", user="cairn", password=dav_server.password
        )
        proxy.outage = True
        started = time.monotonic()
        with pytest.raises(Unreachable, match="5 times"):
            store.write("a.md", b"a")
        assert time.monotonic() - started < 10
        assert proxy.faults["outage"] == 5


def test_retry_after_is_honoured(opened: Opener, dav_server: DavServer, dav_remote: str) -> None:
    folder = dav_remote.split("/dav/", 1)[1]
    with FaultyProxy(
        f"http://127.0.0.1:{dav_server.port}", share=1.0, kinds=("503",), max_in_row=1, retry_after="1"
    ) as proxy:
        store = opened.track(
            WebDavStore(
                f"http://127.0.0.1:{proxy.port}/dav/{folder}", user="cairn", password=dav_server.password
            )
        )
        started = time.monotonic()
        assert list(store.list()) == []
        assert time.monotonic() - started >= 1.0
        assert proxy.faults["503"] == 1


def test_listing_costs_one_propfind_per_folder(
    opened: Opener, dav_server: DavServer, dav_remote: str
) -> None:
    root = Path(dav_server.root, dav_remote.split("/dav/", 1)[1])
    for i in range(200):
        folder = root / f"f{i % 10}" / ("sub" if i % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i}.md").write_bytes(b"x" * i)
    store = opened(dav_remote, user=dav_server.user, password=dav_server.password)
    found = listing(store)
    assert len(found) == 200
    assert store.requests == 1 + 10 + 5  # the root, ten folders, five subfolders
    assert found["f3/sub/n3.md"].size == 3
