"""An in-process emulator of the parts of Seafile's Web API that the Seafile store uses.

No Seafile server can run here, so this WSGI app (werkzeug, on 127.0.0.1 port 0) follows the
documented api2 and fileserver endpoints, and seahub's api2 views where the docs are silent.

It reproduces:
- ``POST /api2/auth-token/`` (username + password -> token) and ``Authorization: Token ...`` on
  every call; an unknown or revoked token answers 401 ``{"detail": "Invalid token"}``.
- ``GET /api2/repos/{id}/dir/?p=`` listing ``[{"type", "name", "id", "size", "mtime"}]`` with the
  folder's object id in an ``oid`` header; ``&oid=`` equal to the current one answers
  ``"uptodate"``; 404 ``{"error_msg": ...}`` for a missing folder. Folder ids are Merkle hashes
  of their entries, so a change anywhere below a folder changes its id and its parents' ids.
- File ids are content fingerprints (SHA-1 of the bytes; 40 zeros for an empty file, as on a
  real server); mtimes are whole seconds.
- ``POST /api2/repos/{id}/dir/?p=`` ``operation=mkdir`` with ``create_parents=true``.
- ``GET /api2/repos/{id}/file/?p=`` -> a download URL (JSON string) with the file id in ``oid``;
  ``GET /api2/repos/{id}/file/detail/?p=``; ``DELETE /api2/repos/{id}/file/?p=``;
  ``POST /api2/repos/{id}/file/?p=`` with ``operation=rename`` (``newname``) or ``operation=move``
  (``dst_repo``, ``dst_dir``). A rename or move onto a taken name gets `` (1)`` added, as Seafile
  does, rather than failing.
- ``GET /api2/repos/{id}/upload-link/?p=`` and ``update-link``; the fileserver's
  ``POST /seafhttp/upload-api/{token}?ret-json=1`` (multipart ``file``, ``parent_dir``,
  ``replace``) answering ``[{"name", "id", "size"}]``, where ``replace=0`` on a taken name stores
  the file as ``name (1).ext``; ``POST /seafhttp/update-api/{token}`` (``file``,
  ``target_file``) answering the new file id; ``GET /seafhttp/files/{token}/{name}``.
- 429 with ``Retry-After`` for the next N API calls (``throttle``), and token revocation
  (``revoke``), for fault tests.

It does not reproduce: encrypted libraries, permissions and shares, file history and trash,
block storage, resumable or chunked uploads, repo API tokens (``/api/v2.1/via-repo-token/``),
search, token expiry (upload and download links never expire), or Seafile's own rules on
which characters a file name may hold (only "/" and NUL are refused).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

EMPTY_ID = "0" * 40


@dataclass
class _File:
    data: bytes
    mtime: int

    @property
    def id(self) -> str:
        return hashlib.sha1(self.data).hexdigest() if self.data else EMPTY_ID


@dataclass
class _Dir:
    children: dict[str, _File | _Dir] = field(default_factory=dict)
    mtime: int = 0

    @property
    def id(self) -> str:
        digest = hashlib.sha1()
        for name in sorted(self.children):
            child = self.children[name]
            digest.update(f"{type(child).__name__}\0{name}\0{child.id}\0".encode())
        return digest.hexdigest()


class SeafileEmulator:
    def __init__(self, user: str = "cairn@example.com", password: str = "secret") -> None:
        self.users = {user: password}
        self.tokens: dict[str, str] = {}
        self.repos: dict[str, _Dir] = {}
        self.links: dict[str, tuple[str, str, str]] = {}  # token -> (kind, repo, path)
        self.calls: list[str] = []
        self._throttle: tuple[int, str] = (0, "0")
        self._lock = threading.RLock()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="seafile", daemon=True)

    # -- control -----------------------------------------------------------------------------

    def start(self) -> SeafileEmulator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def new_repo(self) -> str:
        repo = str(uuid.uuid4())
        with self._lock:
            self.repos[repo] = _Dir()
        return repo

    def token_for(self, user: str) -> str:
        token = uuid.uuid4().hex
        with self._lock:
            self.tokens[token] = user
        return token

    def revoke(self, token: str) -> None:
        with self._lock:
            self.tokens.pop(token, None)

    def throttle(self, calls: int, retry_after: str = "0") -> None:
        """Answer the next ``calls`` API calls with 429 and this Retry-After."""
        self._throttle = (calls, retry_after)

    def put(self, repo: str, path: str, data: bytes) -> None:
        """Write a file as a person would through the web page."""
        with self._lock:
            folder, name = self._parent(repo, path, create=True)
            folder.children[name] = _File(data, int(time.time()))

    # -- the tree ----------------------------------------------------------------------------

    def _node(self, repo: str, path: str) -> _File | _Dir | None:
        node: _File | _Dir | None = self.repos.get(repo)
        for part in [p for p in path.split("/") if p]:
            if not isinstance(node, _Dir):
                return None
            node = node.children.get(part)
        return node

    def _parent(self, repo: str, path: str, *, create: bool = False) -> tuple[_Dir, str]:
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise _Error(400, "Path is invalid.")
        node = self.repos[repo]
        for part in parts[:-1]:
            child = node.children.get(part)
            if child is None and create:
                child = node.children[part] = _Dir(mtime=int(time.time()))
            if not isinstance(child, _Dir):
                raise _Error(404, f"Folder {'/'.join(parts[:-1])} not found.")
            node = child
        if "\0" in parts[-1]:
            raise _Error(400, "Invalid file name.")
        return node, parts[-1]

    @staticmethod
    def _free_name(folder: _Dir, name: str) -> str:
        if name not in folder.children:
            return name
        stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
        n = 1
        while (candidate := f"{stem} ({n}){dot}{ext}") in folder.children:
            n += 1
        return candidate

    # -- HTTP --------------------------------------------------------------------------------

    def _app(self, environ: dict, start_response):  # type: ignore[no-untyped-def]
        request = Request(environ)
        try:
            with self._lock:
                response = self._route(request)
        except _Error as exc:
            response = _json({"error_msg": exc.message}, exc.status)
        finally:
            request.close()  # the spooled files of a multipart upload
        return response(environ, start_response)

    def _route(self, request: Request) -> Response:
        path, method = request.path, request.method
        self.calls.append(f"{method} {path}")
        if path.startswith("/seafhttp/"):
            return self._fileserver(request)
        if path == "/api2/auth-token/" and method == "POST":
            user, password = request.form.get("username"), request.form.get("password")
            if user not in self.users or self.users[user] != password:
                raise _Error(400, "Unable to login with provided credentials.")
            return _json({"token": self.token_for(user)})
        count, retry_after = self._throttle
        if count > 0:
            self._throttle = (count - 1, retry_after)
            return Response('{"detail": "Request was throttled."}', 429, {"Retry-After": retry_after})
        header = request.headers.get("Authorization", "")
        if not header.startswith("Token ") or header[6:] not in self.tokens:
            return _json({"detail": "Invalid token"}, 401)
        parts = path.strip("/").split("/")
        if len(parts) < 4 or parts[:2] != ["api2", "repos"] or parts[2] not in self.repos:
            raise _Error(404, "Library not found.")
        repo, what, p = parts[2], "/".join(parts[3:]), request.args.get("p", "/")
        if what == "dir" and method == "GET":
            node = self._node(repo, p)
            if not isinstance(node, _Dir):
                raise _Error(404, f"Folder {p} not found.")
            if request.args.get("oid") == node.id:
                return _json("uptodate", headers={"oid": node.id})
            entries = [
                {"type": "dir", "name": n, "id": c.id, "mtime": c.mtime}
                if isinstance(c, _Dir)
                else {"type": "file", "name": n, "id": c.id, "size": len(c.data), "mtime": c.mtime}
                for n, c in node.children.items()
            ]
            return _json(entries, headers={"oid": node.id})
        if what == "dir" and method == "POST" and request.form.get("operation") == "mkdir":
            node = self.repos[repo]
            for part in [x for x in p.split("/") if x]:
                child = node.children.setdefault(part, _Dir(mtime=int(time.time())))
                if not isinstance(child, _Dir):
                    raise _Error(400, f"{part} is a file.")
                node = child
            return _json("success", 201)
        if what in ("upload-link", "update-link") and method == "GET":
            if not isinstance(self._node(repo, p), _Dir):
                raise _Error(404, f"Folder {p} not found.")
            token = str(uuid.uuid4())
            self.links[token] = (what.split("-")[0], repo, p)
            return _json(f"{self.url}/seafhttp/{what.split('-')[0]}-api/{token}")
        if what in ("file", "file/detail"):
            return self._file(request, repo, what, p)
        raise _Error(404, "Not found.")

    def _file(self, request: Request, repo: str, what: str, p: str) -> Response:
        node = self._node(repo, p)
        if not isinstance(node, _File):
            raise _Error(404, "File not found.")
        if what == "file/detail":
            name = p.rstrip("/").rsplit("/", 1)[-1]
            return _json(
                {"type": "file", "id": node.id, "name": name, "size": len(node.data), "mtime": node.mtime}
            )
        if request.method == "GET":
            token = str(uuid.uuid4())
            self.links[token] = ("files", repo, p)
            return _json(
                f"{self.url}/seafhttp/files/{token}/{p.rsplit('/', 1)[-1]}", headers={"oid": node.id}
            )
        folder, name = self._parent(repo, p)
        if request.method == "DELETE":
            del folder.children[name]
            return _json("success")
        operation = request.form.get("operation")
        if operation == "rename":
            new = request.form.get("newname", "")
            if not new or "/" in new:
                raise _Error(400, "newname invalid.")
            new = self._free_name(folder, new)
            folder.children[new] = folder.children.pop(name)
            location = f"/api2/repos/{repo}/file/?p={p.rsplit('/', 1)[0]}/{new}"
            return _json("success", 301, headers={"Location": location})
        if operation == "move":
            if request.form.get("dst_repo") != repo:
                raise _Error(400, "Only moves within one library are emulated.")
            target = self._node(repo, request.form.get("dst_dir", ""))
            if not isinstance(target, _Dir):
                raise _Error(404, "Folder not found.")
            new = self._free_name(target, name)
            target.children[new] = folder.children.pop(name)
            location = f"/api2/repos/{repo}/file/?p={request.form.get('dst_dir', '').rstrip('/')}/{new}"
            return _json("success", 301, headers={"Location": location})
        raise _Error(400, "operation can only be 'rename', 'move', 'copy' or 'create'.")

    def _fileserver(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")
        link = self.links.get(parts[2]) if len(parts) >= 3 else None
        if link is None or link[0] + ("-api" if link[0] != "files" else "") != parts[1]:
            return Response("Access token not found", 403)
        kind, repo, p = link
        if kind == "files":
            node = self._node(repo, p)
            if not isinstance(node, _File):
                return Response("File not found", 404)
            return Response(node.data, 200, {"Content-Type": "application/octet-stream"})
        upload = request.files.get("file")
        if upload is None:
            return Response("No file.", 400)
        data = upload.read()
        now = int(time.time())
        if kind == "update":
            target = request.form.get("target_file", "")
            folder, name = self._parent(repo, target)
            if not isinstance(folder.children.get(name), _File):
                return Response("File does not exist", 440)
            folder.children[name] = _File(data, now)
            return Response(folder.children[name].id, 200)  # type: ignore[union-attr]
        parent = request.form.get("parent_dir", p)
        folder = self._node(repo, parent)
        if not isinstance(folder, _Dir):
            return Response("Parent dir doesn't exist.", 400)
        name = upload.filename or "unnamed"
        if request.form.get("replace") != "1" or isinstance(folder.children.get(name), _Dir):
            name = self._free_name(folder, name)
        folder.children[name] = stored = _File(data, now)
        return _json([{"name": name, "id": stored.id, "size": len(data)}])


class _Error(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message


def _json(value: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(value), status, headers or {}, content_type="application/json")
