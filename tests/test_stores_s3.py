"""The S3 store against moto's real threaded S3 server on 127.0.0.1, directly and through faults."""

from __future__ import annotations

import pytest

from cairn.stores import AuthFailed, PreconditionFailed, Store, StoreError, StoreNotFound, open_store
from cairn.stores.s3 import S3Store
from faulty_proxy import FaultyProxy
from servers import S3Server
from store_contract import StoreContract, listing


class TestS3Store(StoreContract):
    @pytest.fixture
    def store(self, s3_remote: str) -> Store:
        store = open_store(s3_remote)
        yield store
        store.close()

    @pytest.fixture
    def other(self, s3_remote: str) -> Store:
        store = open_store(s3_remote)
        yield store
        store.close()


def test_moto_honours_conditional_puts_and_the_probe_leaves_nothing(s3_env: S3Server, s3_remote: str) -> None:
    store = open_store(s3_remote)
    assert store.native_cas is True
    assert store.requests == 4
    prefix = s3_remote.split("/", 3)[3]
    assert s3_env.client().list_objects_v2(Bucket=s3_env.bucket, Prefix=prefix).get("KeyCount") == 0
    store.close()


def test_keys_sit_under_the_prefix_and_other_prefixes_are_not_listed(s3_env: S3Server) -> None:
    mine, theirs = open_store(s3_env.remote("vault-a/nested")), open_store(s3_env.remote("vault-b"))
    mine.write("笔记/a b.md", b"a")
    theirs.write("x.md", b"x")
    assert sorted(listing(mine)) == ["笔记/a b.md"]
    keys = [
        o["Key"] for o in s3_env.client().list_objects_v2(Bucket=s3_env.bucket, Prefix="vault-a")["Contents"]
    ]
    assert keys == ["vault-a/nested/笔记/a b.md"]
    mine.close()
    theirs.close()


def test_an_endpoint_and_region_in_the_url_need_no_environment(s3_server: S3Server, monkeypatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    url = f"{s3_server.remote()}?endpoint={s3_server.endpoint}&region=eu-west-1"
    store = open_store(url, user="testing", password="testing")
    store.write("a.md", b"a")
    assert store.read("a.md").data == b"a"
    store.close()


def test_a_revoked_key_is_auth_failed_with_how_to_renew(s3_env: S3Server) -> None:
    with FaultyProxy(s3_env.endpoint, share=0.0) as proxy:
        store = S3Store(s3_env.bucket, "revoked", endpoint_url=proxy.url)
        store.write("a.md", b"a")
        proxy.auth_revoked = True
        for call in (
            lambda: store.write("a.md", b"b"),
            lambda: list(store.list()),
            lambda: store.read("a.md"),
        ):
            with pytest.raises(AuthFailed, match="Renew it") as info:
                call()
            assert "\n" not in info.value.message
        proxy.auth_revoked = False
        assert store.read("a.md").data == b"a"
        store.close()


def test_no_credentials_is_auth_failed_with_what_to_set(s3_server: S3Server, monkeypatch, tmp_path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    store = open_store(f"{s3_server.remote()}?endpoint={s3_server.endpoint}")
    with pytest.raises(AuthFailed, match="AWS_ACCESS_KEY_ID"):
        store.read("a.md")
    store.close()


def test_a_missing_bucket_is_one_clear_error(s3_env: S3Server) -> None:
    store = open_store("s3://no-such-bucket/x")
    with pytest.raises(StoreError, match="does not exist"):
        list(store.list())
    store.close()


def test_a_move_never_overwrites_and_keeps_a_source_that_changed(s3_remote: str) -> None:
    store = open_store(s3_remote)
    store.write("a.md", b"a")
    store.write("b.md", b"b")
    with pytest.raises(PreconditionFailed):
        store.move("a.md", "b.md")
    with pytest.raises(StoreNotFound):
        store.move("missing.md", "c.md")
    assert {p: store.read(p).data for p in listing(store)} == {"a.md": b"a", "b.md": b"b"}
    store.close()


def test_faults_are_retried_and_nothing_is_lost_or_doubled(s3_env: S3Server, monkeypatch) -> None:
    monkeypatch.setattr(
        "botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.005
    )
    with FaultyProxy(
        s3_env.endpoint, share=0.3, seed=3, max_in_row=2, kinds=("503", "429", "drop", "drop_after")
    ) as proxy:
        remote = s3_env.remote()
        store = S3Store(s3_env.bucket, remote.rsplit("/", 1)[1], endpoint_url=proxy.url)
        for i in range(25):
            version = store.write(f"n/{i}.md", f"note {i}\n".encode(), create_only=True)
            store.write(f"n/{i}.md", f"note {i} edited\n".encode(), if_version=version)
        for i in range(0, 25, 5):
            store.delete(f"n/{i}.md")
        assert proxy.faults.total() >= 10, proxy.faults
        store.close()
    direct = open_store(remote)
    found = listing(direct)
    assert sorted(found) == sorted(f"n/{i}.md" for i in range(25) if i % 5)
    assert all(direct.read(p).data.endswith(b" edited\n") for p in found)
    direct.close()


def test_listing_two_thousand_files_costs_two_requests(s3_env: S3Server, s3_remote: str) -> None:
    prefix = s3_remote.split("/", 3)[3]
    for i in range(2000):
        s3_env.put_directly(f"{prefix}/f{i % 20}/n{i}.md", b"x" * (i % 7))
    store = open_store(s3_remote)
    found = listing(store)
    assert len(found) == 2000
    assert found["f3/n23.md"].size == 23 % 7
    assert store.requests == 2
    store.close()
