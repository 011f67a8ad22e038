"""Real servers on 127.0.0.1 for the store and sync tests: wsgidav on cheroot, and moto's S3.

Both are started once per test session on a free port and stopped at its end. Each test takes
its own empty folder (WebDAV) or key prefix (S3) through ``dav_remote`` / ``s3_remote``, so tests
never see each other's files.

Two changes to stock wsgidav, both so that it behaves as the servers Cairn targets do, and both
off with ``DavServer(stock=True)``:
- Its file ETag is ``inode-mtime-size`` with whole-second mtimes, so two same-size writes within a
  second keep one ETag and ``If-Match`` cannot tell them apart. Nextcloud (a new id per write),
  SeafDAV (the content id) and Apache (microsecond mtimes) change it every time, so the test
  server uses nanosecond mtimes in the same shape.
- It writes a PUT's body into the target file in place and checks ``If-Match`` before reading
  that body, so a concurrent GET sees a half-written file and two racing conditional PUTs can both
  pass. Nextcloud takes a lock on the file and uploads to a ``.part`` file first; here every
  request is handled one at a time, which gives clients the same view.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

USER, PASSWORD = "cairn", "correct horse"


def _one_at_a_time(app):
    lock = threading.Lock()

    def wrapped(environ: dict, start_response):  # type: ignore[no-untyped-def]
        with lock:
            return list(app(environ, start_response))  # the whole body, before the lock goes

    return wrapped


def _precise_provider(root: Path, stock: bool):  # wsgidav imports stay inside: only tests that use it pay
    from wsgidav.fs_dav_provider import FileResource, FilesystemProvider

    if stock:
        return FilesystemProvider(str(root))

    class PreciseFile(FileResource):
        def get_etag(self) -> str:
            st = os.stat(self._file_path)
            return f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}"

    class PreciseProvider(FilesystemProvider):
        def get_resource_inst(self, path: str, environ: dict):  # type: ignore[override]
            res = super().get_resource_inst(path, environ)
            if type(res) is FileResource:
                res.__class__ = PreciseFile
            return res

    return PreciseProvider(str(root))


def _ignoring_conditions(app):
    def wrapped(environ: dict, start_response):  # type: ignore[no-untyped-def]
        environ.pop("HTTP_IF_MATCH", None)
        environ.pop("HTTP_IF_NONE_MATCH", None)
        return app(environ, start_response)

    return wrapped


@dataclass
class DavServer:
    """wsgidav + cheroot serving ``root`` at ``http://127.0.0.1:PORT/dav`` with basic auth."""

    root: Path
    user: str = USER
    password: str = PASSWORD
    honour_conditions: bool = True  # False: a server that ignores If-Match / If-None-Match
    stock: bool = False  # True: wsgidav exactly as shipped (see the top of this module)
    port: int = 0
    _server: object = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> DavServer:
        from cheroot import wsgi
        from wsgidav.wsgidav_app import WsgiDAVApp

        logging.getLogger("wsgidav").setLevel(logging.CRITICAL)
        logging.getLogger("wsgidav").propagate = False
        app = WsgiDAVApp(
            {
                "provider_mapping": {"/dav": _precise_provider(self.root, self.stock)},
                "http_authenticator": {
                    "domain_controller": None,
                    "accept_basic": True,
                    "accept_digest": False,
                    "default_to_digest": False,
                },
                "simple_dc": {"user_mapping": {"*": {self.user: {"password": self.password}}}},
                "dir_browser": {"enable": False},
                "lock_storage": False,
                "verbose": 0,
                "logging": {"enable": False},
            }
        )
        if not self.stock:
            app = _one_at_a_time(app)
        if not self.honour_conditions:
            app = _ignoring_conditions(app)
        server = wsgi.Server(("127.0.0.1", 0), app, numthreads=16)
        server.prepare()
        self.port = server.bind_addr[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve, name="wsgidav", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()  # type: ignore[attr-defined]
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/dav"

    def remote(self, name: str | None = None) -> str:
        """A ``webdav://`` URL of a fresh, empty folder on the server."""
        name = name or uuid.uuid4().hex[:12]
        (self.root / name).mkdir(parents=True, exist_ok=True)
        return f"webdav://127.0.0.1:{self.port}/dav/{name}"


@dataclass
class S3Server:
    """moto's threaded S3 server on ``http://127.0.0.1:PORT`` with one bucket.

    moto checks ``IfMatch`` / ``IfNoneMatch`` and then stores the object in two steps on a
    threaded server, so two racing conditional PUTs could both pass, where AWS decides them
    atomically; the server here therefore handles one request at a time, as wsgidav does.
    """

    bucket: str = "cairn-test"
    port: int = 0
    _server: object = field(default=None, repr=False)

    def start(self) -> S3Server:
        from moto.server import ThreadedMotoServer

        class OneAtATime(ThreadedMotoServer):
            def _server_entry(self) -> None:
                from moto.moto_server.werkzeug_app import (
                    DomainDispatcherApplication,
                    MotoRequestHandler,
                    create_backend_app,
                )
                from werkzeug.serving import make_server

                app = _one_at_a_time(DomainDispatcherApplication(create_backend_app))
                self._server = make_server(
                    self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
                )
                self._server_ready_event.set()
                self._server.serve_forever()

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        server = OneAtATime(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        self.port = server.get_host_and_port()[1]
        self._server = server
        self.client().create_bucket(Bucket=self.bucket)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()  # type: ignore[attr-defined]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def put_directly(self, key: str, data: bytes) -> None:
        """Store an object straight into moto's in-process backend: no HTTP, for big fixtures."""
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        s3_backends[DEFAULT_ACCOUNT_ID]["aws"].put_object(self.bucket, key, data)

    def remote(self, prefix: str | None = None) -> str:
        """An ``s3://`` URL of a fresh, empty prefix in the bucket."""
        return f"s3://{self.bucket}/{prefix or uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def dav_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    server = DavServer(root=tmp_path_factory.mktemp("dav")).start()
    yield server
    server.stop()


@pytest.fixture
def dav_remote(dav_server: DavServer) -> str:
    return dav_server.remote()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The ``AWS_*`` environment a user would set for this server."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return s3_server


@pytest.fixture
def s3_remote(s3_env: S3Server) -> str:
    return s3_env.remote()
