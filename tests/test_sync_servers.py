"""Nothing is lost: three vaults on one real WebDAV (wsgidav) or S3 (moto) remote, writing at the
same time from threads and a process, with a person editing the remote file directly, and with a
proxy in front that fails a share of the requests (tests/faulty_proxy.py).

Afterwards every acknowledged observation is in the note or in a conflict copy, in every vault,
and every vault gives the same search results after one more sync.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn import Memory
from cairn.stores import AuthFailed, PreconditionFailed, Unreachable, open_store
from faulty_proxy import FaultyProxy
from servers import DavServer, S3Server
from sync_helpers import attach, observations, open_vault

NOTE = "user/Shared.md"
APPENDS = 6


@dataclass
class Remote:
    url: str
    credentials: dict[str, str]
    proxy: FaultyProxy | None

    def store(self):  # a person's client: no proxy, no Cairn
        return open_store(self.direct_url, **self.credentials)

    direct_url: str = ""


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cairn.stores.retry.BASE_DELAY", 0.005)


def _remote(request: pytest.FixtureRequest, param: str) -> Iterator[Remote]:
    kind, _, faults = param.partition("+")
    proxy = None
    if kind == "webdav":
        server: DavServer = request.getfixturevalue("dav_server")
        direct = server.remote()
        credentials = {"user": server.user, "password": server.password}
        url = direct
        if faults:
            proxy = FaultyProxy(server.http_url, share=0.2, seed=7).start()
            url = direct.replace(f":{server.port}/", f":{proxy.port}/")
    else:
        s3: S3Server = request.getfixturevalue("s3_env")
        direct = s3.remote()
        credentials = {}
        url = direct
        if faults:
            proxy = FaultyProxy(s3.endpoint, share=0.2, seed=7).start()
            url = f"{direct}?endpoint={proxy.url}"
    yield Remote(url=url, credentials=credentials, proxy=proxy, direct_url=direct)
    if proxy is not None:
        proxy.stop()


@pytest.fixture(params=["webdav", "s3", "webdav+faults", "s3+faults"])
def remote(request: pytest.FixtureRequest) -> Iterator[Remote]:
    yield from _remote(request, request.param)


@pytest.fixture(params=["webdav+faults", "s3+faults"])
def faulty_remote(request: pytest.FixtureRequest) -> Iterator[Remote]:
    yield from _remote(request, request.param)


def _person_appends(remote: Remote, line: str) -> None:
    """A person's editor adding a line to the note on the drive (checking the version it read,
    as a careful client does; a blind overwrite by a person could lose anyone's line)."""
    store = remote.store()
    try:
        while True:
            blob = store.read(NOTE)
            text = blob.data.decode("utf-8").replace("## Observations\n", f"## Observations\n{line}\n", 1)
            try:
                store.write(NOTE, text.encode("utf-8"), if_version=blob.version)
                return
            except PreconditionFailed:
                continue
    finally:
        store.close()


_CHILD = """
import json, sys
import cairn.stores.retry as retry
retry.BASE_DELAY = 0.005
from cairn import Memory
vault, home, name, permalink, count = sys.argv[1:6]
done = []
with Memory.open(vault, home=home, origin=name, watch=False) as mem:
    for _ in range(8):  # the note must be here first; a faulty line may break a run
        try:
            if not mem.sync().failed:
                break
        except Exception:
            pass
    for i in range(int(count)):
        line = f"[fact] {name}-{i}"
        mem.append(permalink, line)
        done.append("- " + line)
print(json.dumps(done))
"""


def _settle(mem: Memory) -> None:
    """One sync with nothing left over: a run, or a file, that the faulty proxy broke (a cut-off
    response can outlast the store's retries) is run again, as the next call would; what it did
    before failing stays done."""
    for _ in range(8):
        try:
            if not mem.sync().failed:
                return
        except Unreachable:
            continue
    assert not mem.sync().failed


def _search_view(mem: Memory) -> list[tuple[str, str]]:
    return [(h.path, h.permalink) for h in mem.search("fact", limit=50)]


def test_three_vaults_appending_at_once_lose_nothing(tmp_path: Path, remote: Remote) -> None:
    a = open_vault(tmp_path, "a", remote.url, **remote.credentials)
    b = open_vault(tmp_path, "b", remote.url, **remote.credentials)
    c_vault, c_home = attach(tmp_path, "c", remote.url, **remote.credentials)
    try:
        note = a.write("Shared", observations=["[fact] seed"])
        _settle(b)
        acknowledged: list[str] = ["- [fact] seed"]
        lock = threading.Lock()
        errors: list[BaseException] = []

        def writer(mem: Memory, name: str) -> None:
            try:
                for i in range(APPENDS):
                    mem.append(note.permalink, f"[fact] {name}-{i}")
                    with lock:
                        acknowledged.append(f"- [fact] {name}-{i}")
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        def person() -> None:
            for i in range(2):
                _person_appends(remote, f"- [fact] hand-{i}")
                with lock:
                    acknowledged.append(f"- [fact] hand-{i}")

        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(c_vault), str(c_home), "c", note.permalink, str(APPENDS)],
            stdout=subprocess.PIPE,
            env=env,
        )
        threads = [threading.Thread(target=writer, args=(m, n)) for m, n in ((a, "a"), (b, "b"))]
        threads.append(threading.Thread(target=person))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0 and not errors, errors
        acknowledged += json.loads(out)
        c = Memory.open(c_vault, home=c_home, origin="c", watch=False)
        try:
            for _round in range(2):
                for mem in (a, b, c):
                    _settle(mem)
            for mem in (a, b, c):
                kept = set(observations(mem.vault, note.path))
                assert set(acknowledged) <= kept, (mem.origin, sorted(set(acknowledged) - kept))
            views = [_search_view(mem) for mem in (a, b, c)]
            assert views[0] == views[1] == views[2] and views[0][0][0] == NOTE
        finally:
            c.close()
    finally:
        a.close()
        b.close()
    assert len(acknowledged) == 1 + 3 * APPENDS + 2


def test_edits_of_the_same_line_and_a_delete_racing_an_edit(tmp_path: Path, remote: Remote) -> None:
    a = open_vault(tmp_path, "a", remote.url, **remote.credentials)
    b = open_vault(tmp_path, "b", remote.url, **remote.credentials)
    try:
        line = a.write("Line", observations=["[plan] start on Monday"])
        doomed = a.write("Doomed", observations=["[plan] keep me"])
        _settle(b)
        barrier = threading.Barrier(2)
        done: dict[str, str] = {}

        def edit(mem: Memory, day: str) -> None:
            barrier.wait()
            mem.edit(line.permalink, "on Monday", f"on {day}")
            done[day] = f"- [plan] start on {day}"

        def delete() -> None:
            barrier.wait()
            a.delete(doomed.permalink)

        def edit_doomed() -> None:
            barrier.wait()
            b.edit(doomed.permalink, "keep me", "keep me, edited")

        for pair in ((lambda: edit(a, "Tuesday"), lambda: edit(b, "Friday")), (delete, edit_doomed)):
            threads = [threading.Thread(target=fn) for fn in pair]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
        for _round in range(2):
            _settle(a)
            _settle(b)
        for mem in (a, b):
            kept = set(observations(mem.vault, line.path))
            assert set(done.values()) <= kept and len(done) == 2
            assert "- [plan] keep me, edited" in observations(mem.vault, doomed.path)  # the edit stays
        assert _search_view(a) == _search_view(b)
    finally:
        a.close()
        b.close()


def test_an_outage_queues_writes_and_a_revoked_credential_stops_sync(
    tmp_path: Path, faulty_remote: Remote
) -> None:
    remote = faulty_remote
    assert remote.proxy is not None
    a = open_vault(tmp_path, "a", remote.url, **remote.credentials)
    b = open_vault(tmp_path, "b", remote.url, **remote.credentials)
    try:
        note = a.write("Queued", observations=["[fact] before"])
        remote.proxy.outage = True
        a.append(note.permalink, "[fact] during outage")  # acknowledged though nothing got through
        assert a.sync_status()["outbox"] == 1
        remote.proxy.outage = False
        remote.proxy.auth_revoked = True
        a.append(note.permalink, "[fact] while revoked")
        with pytest.raises(AuthFailed, match="cairn remote set"):
            a.sync()
        assert a.sync_status()["outbox"] == 1
        remote.proxy.auth_revoked = False
        _settle(a)
        assert a.sync_status()["outbox"] == 0
        _settle(b)
        kept = observations(b.vault, note.path)
        assert {"- [fact] during outage", "- [fact] while revoked"} <= set(kept)
    finally:
        a.close()
        b.close()
