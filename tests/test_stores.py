"""The store contract on the in-memory and folder stores, the folder store's own promises, and
``open_store``'s scheme registry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.stores import InvalidPath, PreconditionFailed, Store, StoreError, Unreachable, open_store
from cairn.stores.local import LocalStore
from store_contract import StoreContract, listing


class TestMemoryStore(StoreContract):
    @pytest.fixture
    def name(self) -> str:
        return f"contract-{os.urandom(6).hex()}"

    @pytest.fixture
    def store(self, name: str) -> Store:
        return open_store(f"memory://{name}")

    @pytest.fixture
    def other(self, name: str) -> Store:
        return open_store(f"memory://{name}")


class TestLocalStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        (tmp_path / "remote").mkdir()
        return LocalStore(tmp_path / "remote")

    @pytest.fixture
    def other(self, tmp_path: Path) -> LocalStore:
        return open_store((tmp_path / "remote").as_uri())  # type: ignore[return-value]


def test_memory_urls_name_one_store_per_process() -> None:
    a = open_store("memory://shared-by-name")
    a.write("x.md", b"1")
    assert open_store("memory://shared-by-name").read("x.md").data == b"1"
    assert listing(open_store("memory://a-different-name")) == {}


def test_local_store_ignores_its_temp_files_and_leaves_none(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / ".a.md.x1y2.tmp").write_bytes(b"half a write")
    store.write("notes/a.md", b"whole")
    store.write("notes/a.md", b"whole again", if_version=store.read("notes/a.md").version)
    assert sorted(listing(store)) == ["notes/a.md"]
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == [".a.md.x1y2.tmp", "a.md"]


def test_local_store_never_follows_links_out_of_its_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_bytes(b"not yours")
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.md").write_bytes(b"mine")
    (root / "link-file.md").symlink_to(outside / "secret.md")
    (root / "link-dir").symlink_to(outside, target_is_directory=True)
    (root / "alias.md").symlink_to(root / "inside.md")
    store = LocalStore(root)
    assert sorted(listing(store)) == ["alias.md", "inside.md"]
    with pytest.raises(StoreError):
        store.read("link-file.md")
    with pytest.raises(StoreError):
        store.read("link-dir/secret.md")
    with pytest.raises(StoreError):
        store.write("link-dir/planted.md", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_local_store_sees_a_hand_edit_of_the_same_size(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    version = store.write("n.md", b"aaaa")
    first = listing(store)["n.md"].version
    with open(tmp_path / "n.md", "r+b") as fh:  # in place: same inode, same size
        fh.write(b"bbbb")
    assert first == version
    assert listing(store)["n.md"].version != version
    with pytest.raises(PreconditionFailed):
        store.write("n.md", b"lost?", if_version=version)
    assert (tmp_path / "n.md").read_bytes() == b"bbbb"


def test_local_store_cas_holds_across_processes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write("counter", b"0")
    script = (
        "import sys\n"
        "from cairn.stores.local import LocalStore\n"
        "from cairn.stores import PreconditionFailed\n"
        "s = LocalStore(sys.argv[1]); done = 0\n"
        "while done < 25:\n"
        "    b = s.read('counter')\n"
        "    try:\n"
        "        s.write('counter', b'%d' % (int(b.data) + 1), if_version=b.version); done += 1\n"
        "    except PreconditionFailed:\n"
        "        pass\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)]) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert store.read("counter").data == b"75"


def test_a_missing_folder_is_unreachable_not_created(tmp_path: Path) -> None:
    with pytest.raises(Unreachable, match="mounted"):
        open_store((tmp_path / "not-mounted").as_uri())
    assert not (tmp_path / "not-mounted").exists()


@pytest.mark.parametrize("url", ["ftp://host/x", "notaurl", "file://otherhost/x", "file://"])
def test_bad_remote_urls_get_one_clear_error(url: str) -> None:
    with pytest.raises(StoreError) as info:
        open_store(url)
    assert not isinstance(info.value, InvalidPath) or "path" in info.value.message
    assert "\n" not in info.value.message


@pytest.mark.parametrize(
    ("url", "library", "extra"),
    [
        ("s3://bucket/prefix", "boto3", "s3"),
        ("webdavs://host/dav", "httpx", "webdav"),
        ("seafile://host/repo-id", "httpx", "seafile"),
    ],
)
def test_a_missing_library_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, url: str, library: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, library, None)  # makes `import library` raise ImportError
    for name in [m for m in sys.modules if m.startswith("cairn.stores.") and m != "cairn.stores.base"]:
        if not name.endswith((".local", ".memory")):
            monkeypatch.delitem(sys.modules, name)
    with pytest.raises(StoreError, match=rf"pip install 'cairn-memory\[{extra}\]'"):
        open_store(url)
