"""Which remote a vault syncs with, and its credentials: kept in the state directory, never in
the vault (the vault syncs; a credential must not).

``<home>/remotes/<vault-id>.json`` (mode 0600, folder 0700) holds ``url``, ``user``, ``password``
and ``token``. The environment supplies or overrides them: ``CAIRN_REMOTE`` (the URL),
``CAIRN_REMOTE_USER``, ``CAIRN_REMOTE_PASSWORD``, ``CAIRN_REMOTE_TOKEN``; S3 remotes also take
boto3's usual ``AWS_*`` variables (read by boto3 itself, ``AWS_ENDPOINT_URL`` included).

A vault named by a URL (``cairn --vault webdav://host/path``) is a *mirror*: a local working copy
kept under ``<home>/mirrors/<id>/`` and attached to that remote.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..errors import InvalidInput
from ..vault import atomic_write

_URL = re.compile(r"^([a-z][a-z0-9+.-]*):/+(.*)$", re.IGNORECASE | re.DOTALL)
SCHEMES = ("webdav", "webdavs", "seafile", "seafile+http", "s3", "file", "memory")


@dataclass(frozen=True)
class Remote:
    url: str
    user: str | None = None
    password: str | None = None
    token: str | None = None

    def masked(self) -> dict[str, str | None]:
        """What ``cairn remote show`` prints: the secrets as ``****`` (or None when unset)."""
        return {
            "url": mask_url(self.url),
            "user": self.user,
            "password": "****" if self.password else None,
            "token": "****" if self.token else None,
        }


def vault_id(vault: Path) -> str:
    """The id Memory gives a vault folder (its index file and lock file carry it too)."""
    return hashlib.sha256(str(vault).encode()).hexdigest()[:16]


def as_url(text: str | os.PathLike[str] | None) -> str | None:
    """``text`` as a remote URL if it is one (``scheme://...``), else None.

    A ``Path`` made from a URL has lost one slash (``webdav:/host``); it is put back, and a
    ``file:`` URL keeps its absolute path (``file:///srv/x``)."""
    if text is None:
        return None
    raw = os.fspath(text)
    match = _URL.match(raw)
    if match is None or match.group(1).lower() not in SCHEMES:
        return None
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme == "file":
        return f"file:///{rest.lstrip('/')}"
    return f"{scheme}://{rest}"


def mask_url(url: str) -> str:
    """The URL without a password written into it (``https://u:secret@host`` -> ``u:****@host``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:****@{parts.hostname or ''}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def mirror_folder(home: Path, url: str) -> Path:
    return home / "mirrors" / hashlib.sha256(url.encode()).hexdigest()[:16]


def config_path(home: Path, vault: Path) -> Path:
    return home / "remotes" / f"{vault_id(vault)}.json"


def check_url(url: str) -> str:
    """``url`` normalised, or InvalidInput naming the schemes Cairn knows."""
    found = as_url(url.strip())
    if found is None:
        raise InvalidInput(
            f"{url!r} is not a remote URL: use webdav://, webdavs://, seafile://, seafile+http://, "
            "s3://bucket/prefix or file:///path"
        )
    return found


def load(home: Path, vault: Path) -> Remote | None:
    """The vault's remote: the saved one with the environment over it; None when there is none."""
    saved: dict[str, str | None] = {}
    path = config_path(home, vault)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (ValueError, OSError) as exc:
        raise InvalidInput(f"{path} is not a readable remote record; run cairn remote set URL again") from exc
    if isinstance(data, dict):
        saved = {k: v for k, v in data.items() if isinstance(v, str)}
    url = os.environ.get("CAIRN_REMOTE") or saved.get("url")
    if not url:
        return None
    remote = Remote(
        url=check_url(url), user=saved.get("user"), password=saved.get("password"), token=saved.get("token")
    )
    return with_env(remote)


def with_env(remote: Remote) -> Remote:
    env = {
        "user": os.environ.get("CAIRN_REMOTE_USER"),
        "password": os.environ.get("CAIRN_REMOTE_PASSWORD"),
        "token": os.environ.get("CAIRN_REMOTE_TOKEN"),
    }
    return replace(remote, **{k: v for k, v in env.items() if v})


def save(home: Path, vault: Path, remote: Remote) -> Path:
    """Record ``remote`` for ``vault``: 0600 file in a 0700 folder, written atomically."""
    path = config_path(home, vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    data = {k: v for k, v in asdict(remote).items() if v is not None}
    data["vault"] = str(vault)
    previous = os.umask(0o077)  # the temp file is born 0600: the secret is never world-readable
    try:
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    return path


def unset(home: Path, vault: Path) -> bool:
    """Forget the vault's remote; True if there was one."""
    try:
        config_path(home, vault).unlink()
    except FileNotFoundError:
        return False
    return True
