"""A folder in a Seafile library as a store, over Seafile's Web API (api2) with httpx.

What it assumes about the server (Seafile 7 to 12, seahub's api2 views):
- A token from ``POST /api2/auth-token/`` (user name + password; fetched again once if it is
  revoked while the password is at hand) or an account API token, sent as ``Token ...``.
- ``GET /api2/repos/{repo}/dir/?p=`` lists one folder; a file's ``id`` is a content fingerprint
  and is the version; a folder's ``id`` (its ``oid`` header when listed) changes whenever
  anything below it changes. The store keeps the last listing of every folder: a folder whose id
  is unchanged is not asked for again, and the root is asked with ``oid=``, so a refresh with
  nothing changed costs one request (answered ``"uptodate"``).
- ``GET /api2/repos/{repo}/file/?p=`` gives a download link and the file id (``oid`` header):
  reading costs two requests. Links are fetched from the address the server gives, without the
  token.
- Writes go through upload links (``replace=1``; ``replace=0`` for create-only, where a name
  clash makes the server store ``name (1).ext``: that copy is deleted and the write fails) and
  update links (for ``if_version``). Upload links are reused per folder for a few minutes.
- There is no compare-and-swap: ``if_version`` checks ``file/detail`` then updates, a move
  checks that the target is free then moves. ``native_cas`` is False; sync re-reads after
  writing. Folders are made with ``mkdir`` and ``create_parents``.
- 429 (with ``Retry-After``), 5xx and dropped connections are retried with backoff.
"""

from __future__ import annotations

import json
import posixpath
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

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

_RETRY = {429, 500, 502, 503, 504}
LINK_LIFETIME = 300.0  # seconds an upload link is reused; Seafile keeps them for an hour


class SeafileStore:
    """Files under ``base`` in the library ``repo`` on ``server`` (``https://host``)."""

    native_cas = False

    def __init__(
        self,
        server: str,
        repo: str,
        base: str = "",
        *,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not token and not (user and password):
            raise AuthFailed("A Seafile remote needs an API token, or a user name and password.")
        self._server = server.rstrip("/")
        self._repo = repo
        self._base = "/" + base.strip("/") if base.strip("/") else ""
        self._user, self._password, self._token = user, password, token
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0), transport=transport)
        self._where = f"{urlsplit(self._server).netloc}/{repo}{self._base}"
        self._lock = threading.Lock()
        self._listings: dict[str, tuple[str, list[dict[str, Any]]]] = {}  # folder -> (oid, entries)
        self._links: dict[str, tuple[str, float]] = {}  # folder -> (upload link, when fetched)
        self.requests = 0

    # -- the protocol ------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[Entry]:
        prefix = check_prefix(prefix)
        yield from self._walk(prefix, known_id=None)

    def read(self, path: str) -> Blob:
        where = self._abs(check_path(path))
        link = self._api("GET", "file/", params={"p": where, "reuse": "1"}, what=f"Reading {path!r}")
        self._check(link, path)
        version = link.headers.get("oid") or self._detail(path)["id"]
        response = self._send("GET", _json(link), what=f"Downloading {path!r}")
        self._check(response, path)
        return Blob(data=response.content, version=version)

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        check_path(path)
        folder, name = posixpath.split(self._abs(path))
        if if_version is not None:
            try:
                current = self._detail(path)["id"]
            except StoreNotFound:
                raise PreconditionFailed(f"{path!r} is gone from {self._where}.") from None
            if current != if_version:
                raise PreconditionFailed(f"{path!r} changed on {self._where}; nothing was written.")
            return self._update(path, folder, data)
        stored = self._upload(path, folder, name, data, replace=not create_only)
        if stored["name"] != name:  # the server kept both: someone else created it first
            self._api(
                "DELETE", "file/", params={"p": f"{folder.rstrip('/')}/{stored['name']}"}, what="Undoing"
            )
            raise PreconditionFailed(f"{path!r} already exists on {self._where}.")
        return str(stored["id"])

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        current = self._detail(check_path(path))["id"]
        if if_version is not None and current != if_version:
            raise PreconditionFailed(f"{path!r} changed on {self._where}; it was not deleted.")
        self._check(
            self._api("DELETE", "file/", params={"p": self._abs(path)}, what=f"Deleting {path!r}"), path
        )

    def move(self, source: str, target: str) -> None:
        self._detail(check_path(source))
        try:
            self._detail(check_path(target))
        except StoreNotFound:
            pass
        else:
            raise PreconditionFailed(f"{target!r} already exists on {self._where}.")
        src_dir, src_name = posixpath.split(self._abs(source))
        dst_dir, dst_name = posixpath.split(self._abs(target))
        at = self._abs(source)
        if dst_dir != src_dir:
            self._mkdir(dst_dir)
            form = {"operation": "move", "dst_repo": self._repo, "dst_dir": dst_dir}
            at = self._file_op(at, form, expect=f"{dst_dir.rstrip('/')}/{src_name}", source=source)
        if dst_name != src_name:
            self._file_op(
                at, {"operation": "rename", "newname": dst_name}, expect=self._abs(target), source=source
            )

    def close(self) -> None:
        self._client.close()

    # -- listing -----------------------------------------------------------------------------

    def _walk(self, rel: str, known_id: str | None) -> Iterator[Entry]:
        where = self._abs(rel) if rel else (self._base or "/")
        cached = self._listings.get(where)
        if cached and known_id == cached[0]:
            entries = cached[1]  # the parent says this folder is unchanged: no request at all
        else:
            params = {"p": where, **({"oid": cached[0]} if cached else {})}
            response = self._api("GET", "dir/", params=params, what=f"Listing {rel or '/'!r}")
            if response.status_code == 404:
                self._listings.pop(where, None)
                return
            self._check(response, rel)
            body = _json(response, any_type=True)
            entries = cached[1] if body == "uptodate" and cached else body
            if not isinstance(entries, list):
                raise StoreError(f"{self._where} sent a listing that is not a list.")
            self._listings[where] = (response.headers.get("oid", ""), entries)
        for item in entries:
            child = f"{rel}/{item['name']}" if rel else str(item["name"])
            if item.get("type") == "dir":
                yield from self._walk(child, known_id=item.get("id"))
            else:
                yield Entry(child, int(item.get("size", 0)), float(item.get("mtime", 0)), str(item["id"]))

    # -- writing -----------------------------------------------------------------------------

    def _upload(self, path: str, folder: str, name: str, data: bytes, *, replace: bool) -> dict[str, Any]:
        form = {"parent_dir": folder, "replace": "1" if replace else "0"}
        for fresh in (False, True):
            link = self._upload_link(folder, fresh=fresh)
            response = self._send(
                "POST",
                link,
                params={"ret-json": "1"},
                data=form,
                files={"file": (name, data)},
                what=f"Uploading {path!r}",
            )
            if response.status_code not in (401, 403, 404) or fresh:
                break
            self._links.pop(folder, None)  # an expired link: fetch a new one once
        self._check(response, path)
        stored = _json(response, any_type=True)
        if isinstance(stored, list) and stored and isinstance(stored[0], dict) and "id" in stored[0]:
            return stored[0]
        raise StoreError(f"{self._where} answered an upload of {path!r} with {response.text[:80]!r}.")

    def _update(self, path: str, folder: str, data: bytes) -> str:
        link = self._api("GET", "update-link/", params={"p": folder}, what=f"Updating {path!r}")
        self._check(link, path)
        form = {"target_file": self._abs(path)}
        name = posixpath.basename(path)
        response = self._send(
            "POST", _json(link), data=form, files={"file": (name, data)}, what=f"Updating {path!r}"
        )
        if response.status_code == 440:  # "file does not exist": deleted since we checked
            raise PreconditionFailed(f"{path!r} is gone from {self._where}.")
        self._check(response, path)
        body = response.text.strip()
        if body.startswith("["):
            return str(json.loads(body)[0]["id"])
        return body.strip('"')

    def _upload_link(self, folder: str, *, fresh: bool) -> str:
        known = self._links.get(folder)
        if known and not fresh and time.monotonic() - known[1] < LINK_LIFETIME:
            return known[0]
        response = self._api("GET", "upload-link/", params={"p": folder}, what="Asking for an upload link")
        if response.status_code == 404:  # the folder is missing
            self._mkdir(folder)
            response = self._api(
                "GET", "upload-link/", params={"p": folder}, what="Asking for an upload link"
            )
        self._check(response, folder)
        link = _json(response)
        self._links[folder] = (link, time.monotonic())
        return link

    def _mkdir(self, folder: str) -> None:
        if folder in ("", "/"):
            return
        form = {"operation": "mkdir", "create_parents": "true"}
        self._check(
            self._api("POST", "dir/", params={"p": folder}, data=form, what=f"Making {folder!r}"), folder
        )

    def _file_op(self, at: str, form: dict[str, str], *, expect: str, source: str) -> str:
        response = self._api("POST", "file/", params={"p": at}, data=form, what=f"Moving {source!r}")
        self._check(response, source)
        landed = parse_qs(urlsplit(response.headers.get("Location", "")).query).get("p", [expect])[0]
        if posixpath.normpath(unquote(landed)) != posixpath.normpath(expect):
            raise PreconditionFailed(
                f"The move of {source!r} met a name taken meanwhile; it is now at {landed!r}."
            )
        return expect

    def _detail(self, path: str) -> dict[str, Any]:
        response = self._api("GET", "file/detail/", params={"p": self._abs(path)}, what=f"Checking {path!r}")
        self._check(response, path)
        return _json(response, any_type=True)

    # -- requests ----------------------------------------------------------------------------

    def _abs(self, rel: str) -> str:
        return f"{self._base}/{rel}"

    def _api(self, method: str, endpoint: str, *, what: str, **kwargs: Any) -> httpx.Response:
        url = f"{self._server}/api2/repos/{self._repo}/{endpoint}"
        for again in (False, True):
            headers = {"Authorization": f"Token {self._login(again)}", "Accept": "application/json"}
            response = self._send(method, url, headers=headers, what=what, **kwargs)
            if response.status_code != 401 or again or not self._password:
                return response
        return response

    def _login(self, again: bool) -> str:
        if self._token and not again:
            return self._token
        if not (self._user and self._password):
            return self._token or ""
        response = self._send(
            "POST",
            f"{self._server}/api2/auth-token/",
            data={"username": self._user, "password": self._password},
            what="Logging in",
        )
        token = response.json().get("token") if response.status_code == 200 else None
        if not token:
            raise AuthFailed(
                f"{self._where} refused the user name or password for {self._user}. Renew it: "
                "cairn remote set URL --user NAME --password-stdin (or CAIRN_REMOTE_PASSWORD)."
            )
        self._token = token
        return token

    def _send(self, method: str, url: str, *, what: str, **kwargs: Any) -> httpx.Response:
        def once(attempt: int) -> httpx.Response:
            with self._lock:
                self.requests += 1
            try:
                response = self._client.request(method, url, **kwargs)
            except httpx.ConnectError as exc:
                raise Unreachable(f"Cannot connect to {self._where}: {exc}.") from exc
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                raise RetryLater(f"{type(exc).__name__}: {exc}") from exc
            if response.status_code in _RETRY:
                raise RetryLater(
                    f"HTTP {response.status_code}", parse_retry_after(response.headers.get("Retry-After"))
                )
            return response

        return with_retries(once, what=f"{what} on {self._where}")

    def _check(self, response: httpx.Response, path: str) -> None:
        status = response.status_code
        if status < 400:
            return
        if status in (401, 403):
            raise AuthFailed(
                f"{self._where} refused the token (HTTP {status}). Renew it: cairn remote set URL "
                "--token-stdin, or --user NAME --password-stdin (or CAIRN_REMOTE_TOKEN)."
            )
        if status == 404:
            raise StoreNotFound(f"No file at {path!r} on {self._where}.")
        if status == 443:
            raise StoreError(f"{self._where} is over its quota.")
        detail = response.text[:120].strip()
        raise StoreError(f"{self._where} answered HTTP {status} for {path!r}: {detail}")


def _json(response: httpx.Response, *, any_type: bool = False) -> Any:
    try:
        value = response.json()
    except ValueError as exc:
        raise StoreError(f"Seafile sent something that is not JSON: {response.text[:80]!r}.") from exc
    if not any_type and not isinstance(value, str):
        raise StoreError(f"Seafile sent {value!r} where a link was expected.")
    return value


def from_url(
    url: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> SeafileStore:
    """``seafile://host/REPO_ID/path`` (https) or ``seafile+http://host[:port]/REPO_ID/path``."""
    parts = urlsplit(url)
    repo, _, base = parts.path.strip("/").partition("/")
    if not parts.hostname or not repo:
        raise StoreError(f"A Seafile remote is seafile://host/LIBRARY_ID/path, not {url!r}.")
    scheme = "http" if parts.scheme.lower() == "seafile+http" else "https"
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    return SeafileStore(
        f"{scheme}://{netloc}", repo, unquote(base), user=user, password=password, token=token
    )
