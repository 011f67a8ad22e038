"""Sync cost: requests and seconds for one sync of a 2,000-note remote vault with 0, 1 and 100
notes changed on the remote, on WebDAV (wsgidav) and S3 (moto), beside a full download (the
first sync of an empty vault) measured in the same run. Writes ``results/sync.md``.

``python -m benchmarks --only sync`` or ``python -m benchmarks.sync_bench [--notes N]``.
The servers are the test servers (tests/servers.py) on 127.0.0.1: no network latency, so the
seconds are the client's and the servers' work; the request counts carry over to a real drive.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .common import REPO, RESULTS

NOTES = 2000
FOLDERS = ("courses", "people", "tasks", "knowledge")


def _note(i: int, extra: str = "") -> bytes:
    return (
        f"---\ntitle: Note {i:04d}\ntype: note\npermalink: note-{i:04d}\n---\n\n# Note {i:04d}\n\n"
        f"## Observations\n- [fact] item {i} of the benchmark vault{extra}\n"
    ).encode()


def _path(i: int) -> str:
    return f"user/{FOLDERS[i % len(FOLDERS)]}/Note {i:04d}.md"


def _measure(
    url: str, home: Path, vault: Path, credentials: dict[str, str]
) -> Callable[[], tuple[int, float, int]]:
    """A function running one sync of the vault: (requests, seconds, files moved)."""
    from cairn import Memory
    from cairn.sync import remotes
    from cairn.sync.link import sync_on_open

    vault.mkdir(parents=True, exist_ok=True)
    remotes.save(home, vault.resolve(), remotes.Remote(url=url, **credentials))
    token = sync_on_open.set(False)
    try:
        mem = Memory.open(vault, home=home, watch=False, origin="bench")
    finally:
        sync_on_open.reset(token)

    def once() -> tuple[int, float, int]:
        started = time.perf_counter()
        report = mem.sync()
        seconds = time.perf_counter() - started
        return report.requests, seconds, len(report.pulled) + len(report.pushed)

    once.memory = mem  # type: ignore[attr-defined]
    return once


def _run_backend(
    name: str, url: str, put: Callable[[str, bytes], None], credentials: dict[str, str], n: int
) -> list[str]:
    for i in range(n):
        put(_path(i), _note(i))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sync = _measure(url, Path(tmp) / "home", Path(tmp) / "vault", credentials)
        try:
            full_requests, full_seconds, moved = sync()
            rows.append(
                f"| {name} | full download (first sync) | {moved} | {full_requests} | {full_seconds:.2f} | 1.00 |"
            )
            changed_so_far = 0
            for changed in (0, 1, 100):
                for i in range(changed_so_far, changed_so_far + changed):
                    put(_path(i), _note(i, f" (changed {changed})"))
                changed_so_far += changed
                requests, seconds, moved = sync()
                assert moved == changed, (moved, changed)
                rows.append(
                    f"| {name} | {changed} changed on the remote | {moved} | {requests} | {seconds:.2f} "
                    f"| {seconds / full_seconds:.3f} |"
                )
        finally:
            sync.memory.close()  # type: ignore[attr-defined]
    return rows


def run(n: int = NOTES) -> str:
    sys.path.insert(0, str(REPO / "tests"))
    import servers  # the same real servers the tests start

    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "dav").mkdir()
        dav = servers.DavServer(root=Path(tmp) / "dav").start()
        try:
            url = dav.remote("bench")
            folder = Path(tmp) / "dav" / "bench"

            def put_dav(path: str, data: bytes) -> None:
                target = folder / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)

            rows += _run_backend(
                "WebDAV (wsgidav)", url, put_dav, {"user": dav.user, "password": dav.password}, n
            )
        finally:
            dav.stop()
    s3 = servers.S3Server().start()
    try:
        import os

        env = {
            "AWS_ENDPOINT_URL": s3.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            url = s3.remote("bench")
            rows += _run_backend("S3 (moto)", url, lambda p, d: s3.put_directly(f"bench/{p}", d), {}, n)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    finally:
        s3.stop()
    text = "\n".join(
        [
            "## Sync",
            "",
            f"One `Memory.sync()` of a {n:,}-note remote vault (four folders under `user/`), notes",
            "changed on the remote by another writer; the full download is the first sync of an empty",
            "vault in the same run. Servers on 127.0.0.1 (no network latency). Ratio = seconds / full download.",
            "",
            "| remote | sync | files moved | requests | seconds | ratio |",
            "|---|---|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sync_bench")
    ap.add_argument("--notes", type=int, default=NOTES)
    args = ap.parse_args(argv)
    text = run(args.notes)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        (RESULTS / "sync.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
