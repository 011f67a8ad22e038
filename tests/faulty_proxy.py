"""An HTTP proxy on 127.0.0.1 that fails a share of the requests it passes to a real server.

Put it in front of the wsgidav or moto server and point a store at ``proxy.port`` instead: sync
tests then prove that nothing is lost when the network misbehaves. Faults are drawn from a
``random.Random(seed)``, so one seed gives one sequence of faults (threads racing change which
request draws which fault, not how many there are), and no more than ``max_in_row`` requests fail
in a row, so a client with bounded retries always gets through.

Faults (``kinds``):
    "503"         503 Service Unavailable with ``Retry-After``; the server never saw the request
    "429"         429 Too Many Requests with ``Retry-After``; the server never saw the request
    "drop"        the connection is closed before the request reaches the server
    "drop_after"  the server handles the request, then the connection is closed unanswered:
                  the client cannot know whether its write happened
    "truncate"    the server's response is cut off halfway through its body

Switches: ``auth_revoked = True`` answers every request 401 (a revoked credential) and
``outage = True`` drops every connection (the remote is unreachable), until set back.
The Host header is passed through untouched, so S3 signatures and WebDAV Destination headers
stay valid. Request bodies are read whole before anything is forwarded.
"""

from __future__ import annotations

import collections
import http.client
import random
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

KINDS = ("503", "429", "drop", "drop_after", "truncate")
_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection", "te", "upgrade"}


class FaultyProxy:
    def __init__(
        self,
        upstream: str,
        *,
        share: float = 0.2,
        kinds: tuple[str, ...] = KINDS,
        seed: int = 0,
        max_in_row: int = 2,
        retry_after: str = "0",
    ) -> None:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {KINDS}")
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.share, self.kinds, self.max_in_row, self.retry_after = share, kinds, max_in_row, retry_after
        self.auth_revoked = False
        self.outage = False
        self.requests = 0
        self.faults: collections.Counter[str] = collections.Counter()
        self._random = random.Random(seed)
        self._in_row = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="faulty-proxy", daemon=True)

    def start(self) -> FaultyProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> FaultyProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def draw(self) -> str | None:
        """The fault for the next request, or None to pass it through."""
        with self._lock:
            self.requests += 1
            if self.outage:
                self.faults["outage"] += 1
                return "outage"
            if self.auth_revoked:
                self.faults["401"] += 1
                return "401"
            roll, kind = self._random.random(), self._random.choice(self.kinds)
            if roll >= self.share or self._in_row >= self.max_in_row:
                self._in_row = 0
                return None
            self._in_row += 1
            self.faults[kind] += 1
            return kind


def _handler_for(proxy: FaultyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes

        def log_message(self, format: str, *args: object) -> None:  # quiet tests
            pass

        def handle_one_request(self) -> None:
            try:
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline or not self.parse_request():
                    self.close_connection = True
                    return
                self._proxy()
            except (ConnectionError, TimeoutError):
                self.close_connection = True

        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                raw = bytearray()
                while True:
                    line = self.rfile.readline()
                    raw += line
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while (trailer := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                            raw += trailer
                        raw += b"\r\n"
                        return bytes(raw)
                    raw += self.rfile.read(size + 2)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _drop(self) -> None:
            self.close_connection = True
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.connection.close()

        def _answer(self, status: int, body: bytes, extra: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _proxy(self) -> None:
            body = self._read_body()
            fault = proxy.draw()
            if fault in ("outage", "drop"):
                return self._drop()
            if fault in ("503", "429"):
                return self._answer(int(fault), b"injected fault\n", {"Retry-After": proxy.retry_after})
            if fault == "401":
                return self._answer(401, b"credential revoked\n", {"WWW-Authenticate": 'Basic realm="cairn"'})
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in _HOP:
                        conn.putheader(name, value)
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    conn.putheader("Transfer-Encoding", "chunked")
                conn.endheaders(body)
                response = conn.getresponse()
                payload = response.read()
                headers = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP]
            finally:
                conn.close()
            if fault == "drop_after":
                return self._drop()
            self.send_response_only(response.status, response.reason)
            for name, value in headers:
                if name.lower() != "content-length":
                    self.send_header(name, value)
            length = response.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(payload)))
            self.end_headers()
            if self.command == "HEAD":
                return None
            if fault == "truncate" and payload:
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                return self._drop()
            self.wfile.write(payload)
            return None

    return Handler
