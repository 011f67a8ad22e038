"""One contract every store backend passes (DESIGN section 6), fsspec-style.

Subclass ``StoreContract`` in a ``Test*`` class and give it two fixtures: ``store``, an empty
store, and ``other``, a second, independent client on the same backend (its own connections and
caches), which stands for another device.
"""

from __future__ import annotations

import threading
import time

import pytest

from cairn.stores import Entry, InvalidPath, PreconditionFailed, Store, StoreError, StoreNotFound

NAMES = [
    "笔记/数据 结构 2026秋.md",
    "with space/and more spaces.md",
    "special/a%20b #1 & c+d=e;f,g'h@(i)[j].md",
    "special/100% ?sure.md",
    "日本語/ひらがな カタカナ.md",
    "한국어/메모.md",
]


def listing(store: Store, prefix: str = "") -> dict[str, Entry]:
    return {e.path: e for e in store.list(prefix)}


class StoreContract:
    #: backends that cannot store some names (none so far) list them here
    skip_names: tuple[str, ...] = ()

    def test_is_a_store_and_says_whether_cas_is_native(self, store: Store) -> None:
        assert isinstance(store, Store)
        assert store.native_cas in (True, False)
        assert isinstance(store.requests, int)

    def test_an_empty_store_lists_nothing_and_reads_nothing(self, store: Store) -> None:
        assert listing(store) == {}
        assert listing(store, "no/such/folder") == {}
        with pytest.raises(StoreNotFound):
            store.read("missing.md")

    def test_write_returns_the_version_that_read_and_list_report(self, store: Store) -> None:
        data = "# 标题\n\n- [fact] 第一条 #tag\r\nbinary \x00\xff tail".encode()
        before = time.time()
        version = store.write("notes/a.md", data)
        blob = store.read("notes/a.md")
        assert blob.data == data
        assert blob.version == version
        entry = listing(store)["notes/a.md"]
        assert entry.version == version
        assert entry.size == len(data)
        assert before - 3600 < entry.mtime < time.time() + 3600

    def test_new_bytes_give_a_new_version_every_time(self, store: Store) -> None:
        seen = set()
        for i in range(4):
            seen.add(store.write("v.md", f"version {i}\n".encode()))
            assert store.read("v.md").data == f"version {i}\n".encode()
        assert len(seen) == 4
        assert listing(store)["v.md"].version == store.read("v.md").version

    def test_every_byte_value_and_line_ending_survives(self, store: Store) -> None:
        data = bytes(range(256)) + b"\r\n\n\r"
        store.write("bin/all.bytes", data)
        assert store.read("bin/all.bytes").data == data

    def test_empty_file(self, store: Store) -> None:
        version = store.write("empty.md", b"")
        assert store.read("empty.md").data == b""
        assert listing(store)["empty.md"].size == 0
        assert store.read("empty.md").version == version

    def test_five_megabyte_file(self, store: Store) -> None:
        data = bytes(range(251)) * (5 * 1024 * 1024 // 251 + 1)
        version = store.write("big/five.bin", data)
        blob = store.read("big/five.bin")
        assert blob.data == data
        assert blob.version == version
        assert listing(store, "big")["big/five.bin"].size == len(data)

    def test_cjk_space_and_url_special_names(self, store: Store) -> None:
        names = [n for n in NAMES if n not in self.skip_names]
        for i, name in enumerate(names):
            store.write(name, f"{i} {name}".encode())
        found = listing(store)
        assert sorted(found) == sorted(names)
        for i, name in enumerate(names):
            assert store.read(name).data == f"{i} {name}".encode()
            assert found[name].version == store.read(name).version

    def test_nested_folders_and_prefixes(self, store: Store) -> None:
        paths = ["a/b/c/d/deep.md", "a/b/two.md", "a/top.md", "ab/not-under-a.md", "root.md"]
        for path in paths:
            store.write(path, path.encode())
        assert sorted(listing(store)) == sorted(paths)
        assert sorted(listing(store, "a")) == ["a/b/c/d/deep.md", "a/b/two.md", "a/top.md"]
        assert sorted(listing(store, "a/b/")) == ["a/b/c/d/deep.md", "a/b/two.md"]
        assert sorted(listing(store, "a/b/c/d")) == ["a/b/c/d/deep.md"]
        assert listing(store, "a/top.md/x") == {}

    def test_if_version_that_holds_writes(self, store: Store) -> None:
        v1 = store.write("cas.md", b"one")
        v2 = store.write("cas.md", b"two", if_version=v1)
        assert v2 != v1
        assert store.read("cas.md").data == b"two"
        v3 = store.write("cas.md", b"three", if_version=v2)
        assert store.read("cas.md").version == v3

    def test_stale_if_version_fails_and_keeps_the_file(self, store: Store) -> None:
        v1 = store.write("cas.md", b"one")
        store.write("cas.md", b"someone else's")
        with pytest.raises(PreconditionFailed):
            store.write("cas.md", b"mine", if_version=v1)
        assert store.read("cas.md").data == b"someone else's"

    def test_if_version_on_a_missing_file_fails_and_creates_nothing(self, store: Store) -> None:
        version = store.write("gone.md", b"x")
        store.delete("gone.md")
        with pytest.raises(PreconditionFailed):
            store.write("gone.md", b"y", if_version=version)
        assert "gone.md" not in listing(store)

    def test_create_only(self, store: Store) -> None:
        version = store.write("new/once.md", b"first", create_only=True)
        assert store.read("new/once.md").version == version
        with pytest.raises(PreconditionFailed):
            store.write("new/once.md", b"second", create_only=True)
        assert store.read("new/once.md").data == b"first"
        assert sorted(listing(store)) == ["new/once.md"]

    def test_delete(self, store: Store) -> None:
        store.write("d/keep.md", b"keep")
        version = store.write("d/drop.md", b"drop")
        store.delete("d/drop.md", if_version=version)
        assert sorted(listing(store)) == ["d/keep.md"]
        with pytest.raises(StoreNotFound):
            store.read("d/drop.md")
        with pytest.raises(StoreNotFound):
            store.delete("d/drop.md")
        store.delete("d/keep.md")
        assert listing(store) == {}

    def test_delete_with_a_stale_version_fails_and_keeps_the_file(self, store: Store) -> None:
        v1 = store.write("d.md", b"one")
        store.write("d.md", b"two")
        with pytest.raises(PreconditionFailed):
            store.delete("d.md", if_version=v1)
        assert store.read("d.md").data == b"two"

    def test_move(self, store: Store) -> None:
        store.write("from/note 笔记.md", b"moving")
        store.move("from/note 笔记.md", "to/new folder/笔记 moved.md")
        assert sorted(listing(store)) == ["to/new folder/笔记 moved.md"]
        assert store.read("to/new folder/笔记 moved.md").data == b"moving"
        with pytest.raises(StoreNotFound):
            store.move("from/note 笔记.md", "elsewhere.md")

    def test_move_onto_an_existing_file_fails_and_keeps_both(self, store: Store) -> None:
        store.write("src.md", b"source")
        store.write("dst.md", b"target")
        with pytest.raises(PreconditionFailed):
            store.move("src.md", "dst.md")
        assert store.read("src.md").data == b"source"
        assert store.read("dst.md").data == b"target"

    @pytest.mark.parametrize(
        "bad", ["", "/abs.md", "../up.md", "a/../b.md", "a//b.md", "a/./b", "nul\x00.md"]
    )
    def test_bad_paths_are_refused_before_any_request(self, store: Store, bad: str) -> None:
        before = store.requests
        with pytest.raises(InvalidPath):
            store.write(bad, b"x")
        with pytest.raises(InvalidPath):
            store.read(bad)
        assert store.requests == before
        assert issubclass(InvalidPath, StoreError)

    def test_another_client_sees_writes_moves_and_deletes(self, store: Store, other: Store) -> None:
        store.write("shared/a.md", b"a1")
        store.write("shared/sub/b.md", b"b1")
        store.write("shared/c.md", b"c1")
        assert sorted(listing(other)) == ["shared/a.md", "shared/c.md", "shared/sub/b.md"]
        first = listing(store)
        v_a = other.write("shared/a.md", b"a2 from the other device")
        other.write("shared/sub/deeper/new.md", b"new")
        other.delete("shared/c.md")
        other.move("shared/sub/b.md", "moved/b.md")
        now = listing(store)
        assert sorted(now) == ["moved/b.md", "shared/a.md", "shared/sub/deeper/new.md"]
        assert now["shared/a.md"].version == v_a != first["shared/a.md"].version
        assert store.read("shared/a.md") == other.read("shared/a.md")
        with pytest.raises(PreconditionFailed):
            store.write("shared/a.md", b"stale", if_version=first["shared/a.md"].version)

    def test_racing_compare_and_swap_loses_no_increment(self, store: Store, other: Store) -> None:
        if not (store.native_cas and other.native_cas):
            pytest.skip("check-then-write backend: sync re-reads after writing instead")
        store.write("counter", b"0")
        rounds = 10

        def bump(client: Store) -> None:
            done = 0
            while done < rounds:
                blob = client.read("counter")
                try:
                    client.write("counter", b"%d" % (int(blob.data) + 1), if_version=blob.version)
                    done += 1
                except PreconditionFailed:
                    continue

        threads = [threading.Thread(target=bump, args=(c,)) for c in (store, other, store, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert int(store.read("counter").data) == 4 * rounds

    def test_racing_create_only_has_one_winner(self, store: Store, other: Store) -> None:
        if not (store.native_cas and other.native_cas):
            pytest.skip("check-then-write backend: sync re-reads after writing instead")
        winners: list[bytes] = []

        def create(client: Store, tag: bytes) -> None:
            try:
                client.write("race/once.md", tag, create_only=True)
                winners.append(tag)
            except PreconditionFailed:
                pass

        threads = [
            threading.Thread(target=create, args=(c, b"writer %d" % i))
            for i, c in enumerate([store, other] * 4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(winners) == 1
        assert store.read("race/once.md").data == winners[0]
