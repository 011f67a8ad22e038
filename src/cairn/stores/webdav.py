"""A WebDAV folder as a store, over httpx (Nextcloud, SeafDAV, Jianguoyun, Apache, wsgidav ...).

What it assumes about the server:
- ``PROPFIND Depth: 1`` works on every folder and reports ``getetag``, ``getlastmodified``,
  ``getcontentlength`` and ``resourcetype``; a full listing is one PROPFIND per folder.
- ETags are strong and change on every write; they are the versions.
- ``If-Match`` / ``If-None-Match: *`` on PUT and DELETE are honoured by most servers. The first
  conditional operation probes whether this one does (four requests on a ``.cairn-probe-*`` file)
  and records it in ``native_cas``; when it does not, the store checks with HEAD, then writes,
  and sync's re-read after writing closes the window. Some servers ignore ``If-Match`` on a file
  that is gone and create it: a 201 answer to a conditional PUT is taken back (deleted).
- PUT takes the whole body with a Content-Length (no chunked or sliced uploads); a missing parent
  answers 409 and is made with MKCOL. ``MOVE`` honours ``Overwrite: F``.
- 401/403 mean the credential is wrong or revoked; 429, 5xx, 423 (locked) and dropped
  connections are worth retrying, with backoff that honours ``Retry-After``.
"""

from __future__ import annotations

import threading
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from urllib.parse import quote, unquote, urlsplit

import httpx

from .base import (
    AuthFailed,
    Blob,
    Entry,
    PreconditionFailed,
    StoreError,
    StoreNotFound,
    Unreachable,
    check_path,
    check_prefix,
)
from .retry import RetryLater, parse_retry_after, with_retries

_PROPFIND = (
    b'<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop>'
    b"<d:resourcetype/><d:getetag/><d:getlastmodified/><d:getcontentlength/>"
    b"</d:prop></d:propfind>"
)
_RETRY = {423, 429, 500, 502, 503, 504}
PROBE_PREFIX = ".cairn-probe-"


class WebDavStore:
    """Files under one WebDAV folder (``base_url`` is ``http(s)://host/path``)."""

    def __init__(
        self,
        base_url: str,
        *,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        self._base_path = "/" + unquote(parts.path).strip("/")
        self._base_path = self._base_path.rstrip("/") + "/"
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._where = f"{parts.netloc}{self._base_path}"
        auth = httpx.BasicAuth(user, password or "") if user else None
        headers = {"Authorization": f"Bearer {token}"} if token and not user else {}
        self._client = httpx.Client(
            auth=auth, headers=headers, timeout=httpx.Timeout(timeout, connect=10.0), transport=transport
        )
        self._user = user
        self._lock = threading.Lock()
        self._native: bool | None = None
        self._folders: set[str] = set()  # folders known to exist, so MKCOL is not repeated
        self.requests = 0

    # -- the protocol ------------------------------------------------------------------------

    @property
    def native_cas(self) -> bool:
        if self._native is None:
            self._native = self._probe_cas()
        return self._native

    def list(self, prefix: str = "") -> Iterator[Entry]:
        pending = [check_prefix(prefix)]
        while pending:
            folder = pending.pop()
            for rel, is_folder, entry in self._propfind(folder):
                if is_folder:
                    pending.append(rel)
                elif entry is not None and not rel.rsplit("/", 1)[-1].startswith(PROBE_PREFIX):
                    yield entry

    def read(self, path: str) -> Blob:
        url = self._url(check_path(path))
        response = self._send("GET", url, what=f"Reading {path!r}")
        self._check(response, path)
        return Blob(data=response.content, version=self._etag(response, path))

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        url = self._url(check_path(path))
        data = bytes(data)
        conditional = if_version is not None or create_only
        if conditional and not self.native_cas:
            self._check_then(path, if_version=if_version, create_only=create_only)
        headers = {"Content-Type": "application/octet-stream"}
        if conditional and self.native_cas:
            headers.update({"If-None-Match": "*"} if create_only else {"If-Match": str(if_version)})

        def put(attempt: int) -> httpx.Response:
            response = self._once("PUT", url, attempt, headers=headers, content=data)
            if response.status_code in (404, 409):  # a parent folder is missing
                self._make_folders(path.rsplit("/", 1)[0] if "/" in path else "")
                response = self._once("PUT", url, attempt, headers=headers, content=data)
            if response.status_code == 412 and attempt > 0:
                return self._own_earlier_write(path, data) or response
            return response

        response = with_retries(put, what=f"Writing {path!r} to {self._where}")
        self._check(response, path)
        version = self._etag(response, path)
        if if_version is not None and response.status_code == 201:
            # The server created a file that If-Match said must exist: take it back.
            self._send("DELETE", url, what=f"Undoing {path!r}", headers={"If-Match": version})
            raise PreconditionFailed(f"{path!r} is gone from {self._where}; it was not recreated.")
        return version

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        url = self._url(check_path(path))
        headers = {}
        if if_version is not None:
            if self.native_cas:
                headers["If-Match"] = if_version
            else:
                self._check_then(path, if_version=if_version, create_only=False)

        def delete(attempt: int) -> httpx.Response:
            response = self._once("DELETE", url, attempt, headers=headers)
            if response.status_code == 404 and attempt > 0:
                response.status_code = 204  # our earlier try got through before the line dropped
            return response

        self._check(with_retries(delete, what=f"Deleting {path!r} on {self._where}"), path)

    def move(self, source: str, target: str) -> None:
        src, dst = self._url(check_path(source)), self._url(check_path(target))
        headers = {"Destination": dst, "Overwrite": "F"}

        def move(attempt: int) -> httpx.Response:
            response = self._once("MOVE", src, attempt, headers=headers)
            if response.status_code == 409:
                self._make_folders(target.rsplit("/", 1)[0] if "/" in target else "")
                response = self._once("MOVE", src, attempt, headers=headers)
            if response.status_code in (404, 412) and attempt > 0 and self._moved(source, target):
                response.status_code = 201
            return response

        response = with_retries(move, what=f"Moving {source!r} on {self._where}")
        if response.status_code == 412:
            raise PreconditionFailed(f"{target!r} already exists on {self._where}.")
        self._check(response, source)

    def close(self) -> None:
        self._client.close()

    # -- requests ----------------------------------------------------------------------------

    def _url(self, rel: str) -> str:
        return self._origin + quote(self._base_path + rel, safe="/")

    def _once(self, method: str, url: str, attempt: int, **kwargs: object) -> httpx.Response:
        """One request; raises ``RetryLater`` for what backoff may cure."""
        with self._lock:
            self.requests += 1
        try:
            response = self._client.request(method, url, **kwargs)  # type: ignore[arg-type]
        except httpx.ConnectError as exc:
            raise Unreachable(f"Cannot connect to {self._where}: {exc}.") from exc
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise RetryLater(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code in _RETRY:
            wait = parse_retry_after(response.headers.get("Retry-After"))
            raise RetryLater(f"HTTP {response.status_code}", wait)
        return response

    def _send(self, method: str, url: str, *, what: str, **kwargs: object) -> httpx.Response:
        return with_retries(lambda attempt: self._once(method, url, attempt, **kwargs), what=what)

    def _check(self, response: httpx.Response, path: str) -> None:
        status = response.status_code
        if status < 300:
            return
        if status in (401, 403):
            who = f" for {self._user}" if self._user else ""
            raise AuthFailed(
                f"{self._where} refused the credential{who} (HTTP {status}). Renew it: "
                "cairn remote set URL --user NAME --password-stdin (or CAIRN_REMOTE_PASSWORD)."
            )
        if status == 404:
            raise StoreNotFound(f"No file at {path!r} on {self._where}.")
        if status == 412:
            raise PreconditionFailed(f"{path!r} changed on {self._where}; nothing was written.")
        if status == 507:
            raise StoreError(f"{self._where} is out of space (HTTP 507).")
        raise StoreError(f"{self._where} answered HTTP {status} for {path!r}.")

    def _etag(self, response: httpx.Response, path: str) -> str:
        etag = response.headers.get("ETag")
        if etag:
            return _strong(etag)
        for rel, _is_folder, entry in self._propfind(path, depth="0"):
            if rel == path and entry is not None:
                return entry.version
        raise StoreError(f"{self._where} gave no ETag for {path!r}; Cairn needs ETags to sync.")

    # -- folders -----------------------------------------------------------------------------

    def _propfind(self, rel: str, depth: str = "1") -> list[tuple[str, bool, Entry | None]]:
        url = self._url(rel) + ("/" if rel and depth == "1" else "")
        headers = {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"}
        response = self._send(
            "PROPFIND", url, what=f"Listing {rel or '/'!r}", headers=headers, content=_PROPFIND
        )
        if response.status_code == 404:
            return []
        self._check(response, rel)
        try:
            root = ET.fromstring(response.content)
        except ET.ParseError as exc:
            raise StoreError(f"{self._where} sent a listing that is not XML: {exc}.") from exc
        found = []
        for item in root.iter("{DAV:}response"):
            href = unquote(urlsplit(item.findtext("{DAV:}href", "")).path)
            if not href.startswith(self._base_path) and href + "/" != self._base_path:
                continue
            child = href[len(self._base_path) :].strip("/")
            if child == rel or not child:
                if depth == "0" and child == rel:
                    found.append((child, False, _entry(child, item)))
                continue
            if item.find(".//{DAV:}resourcetype/{DAV:}collection") is not None:
                self._folders.add(child)
                found.append((child, True, None))
            else:
                found.append((child, False, _entry(child, item)))
        return found

    def _make_folders(self, folder: str) -> None:
        """MKCOL ``folder`` and whichever of its parents are missing (base folder included)."""
        if not folder and self._base_path == "/":
            return
        key = folder or "\0base"
        if key in self._folders:
            return
        url = (
            self._url(folder).rstrip("/") + "/" if folder else self._origin + quote(self._base_path, safe="/")
        )
        response = self._send("MKCOL", url, what=f"Making folder {folder!r}")
        if response.status_code == 409:  # its parent is missing too
            parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
            if folder:
                self._make_folders(parent)
            response = self._send("MKCOL", url, what=f"Making folder {folder!r}")
        if response.status_code not in (201, 405):  # 405: it is already there
            self._check(response, folder)
        self._folders.add(key)

    # -- conditions --------------------------------------------------------------------------

    def _probe_cas(self) -> bool:
        """Does the server refuse a PUT whose If-None-Match / If-Match fails?"""
        probe = self._url(f"{PROBE_PREFIX}{uuid.uuid4().hex}")
        first = self._send(
            "PUT", probe, what="Probing conditions", headers={"If-None-Match": "*"}, content=b""
        )
        if first.status_code == 409:
            self._make_folders("")
            first = self._send(
                "PUT", probe, what="Probing conditions", headers={"If-None-Match": "*"}, content=b""
            )
        self._check(first, "(probe)")
        again = self._send(
            "PUT", probe, what="Probing conditions", headers={"If-None-Match": "*"}, content=b"x"
        )
        stale = self._send(
            "PUT", probe, what="Probing conditions", headers={"If-Match": '"cairn-never"'}, content=b"y"
        )
        self._send("DELETE", probe, what="Removing the probe")
        return again.status_code == 412 and stale.status_code == 412

    def _check_then(self, path: str, *, if_version: str | None, create_only: bool) -> None:
        """The check half of check-then-write, for servers that ignore conditions."""
        head = self._send("HEAD", self._url(path), what=f"Checking {path!r}")
        if head.status_code == 404:
            if if_version is not None:
                raise PreconditionFailed(f"{path!r} is gone from {self._where}.")
            return
        self._check(head, path)
        if create_only:
            raise PreconditionFailed(f"{path!r} already exists on {self._where}.")
        if if_version is not None and self._etag(head, path) != if_version:
            raise PreconditionFailed(f"{path!r} changed on {self._where}; nothing was written.")

    def _own_earlier_write(self, path: str, data: bytes) -> httpx.Response | None:
        """After a retry met 412: if the file holds exactly our bytes, the first try landed."""
        response = self._send("GET", self._url(path), what=f"Re-reading {path!r}")
        return response if response.status_code == 200 and response.content == data else None

    def _moved(self, source: str, target: str) -> bool:
        gone = self._send("HEAD", self._url(source), what="Checking a move").status_code == 404
        return gone and self._send("HEAD", self._url(target), what="Checking a move").status_code == 200


def _strong(etag: str) -> str:
    etag = etag.strip()
    if etag.startswith("W/"):
        etag = etag[2:]
    return etag if etag.startswith('"') else f'"{etag}"'


def _entry(rel: str, item: ET.Element) -> Entry | None:
    etag = item.findtext(".//{DAV:}getetag")
    if not etag:
        return None
    modified = item.findtext(".//{DAV:}getlastmodified")
    try:
        mtime = parsedate_to_datetime(modified).timestamp() if modified else 0.0
    except (TypeError, ValueError):
        mtime = 0.0
    size = item.findtext(".//{DAV:}getcontentlength") or "0"
    return Entry(path=rel, size=int(size) if size.isdigit() else 0, mtime=mtime, version=_strong(etag))


def from_url(
    url: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> WebDavStore:
    """``webdav://host[:port]/path`` (http) or ``webdavs://host/path`` (https)."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise StoreError(f"A WebDAV remote is webdav(s)://host/path, not {url!r}.")
    scheme = "https" if parts.scheme.lower() == "webdavs" else "http"
    user = user or (unquote(parts.username) if parts.username else None)
    password = password or (unquote(parts.password) if parts.password else None)
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    return WebDavStore(f"{scheme}://{netloc}{parts.path}", user=user, password=password, token=token)
