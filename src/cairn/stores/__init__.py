"""Where a vault's files live: ``open_store(url)`` picks a backend by the URL's scheme.

Backends are imported only when asked for, so a missing optional library costs nothing until a
remote of that kind is opened, and then says which extra to install.
"""

from __future__ import annotations

import importlib
from urllib.parse import urlsplit

from .base import (
    AuthFailed,
    Blob,
    Entry,
    InvalidPath,
    PreconditionFailed,
    Store,
    StoreError,
    StoreNotFound,
    Unreachable,
)

#: scheme -> (module under cairn.stores, the extra that brings its library, or None)
SCHEMES: dict[str, tuple[str, str | None]] = {
    "file": ("local", None),
    "memory": ("memory", None),
    "webdav": ("webdav", "webdav"),
    "webdavs": ("webdav", "webdav"),
    "s3": ("s3", "s3"),
    "seafile": ("seafile", "seafile"),
    "seafile+http": ("seafile", "seafile"),
}

__all__ = [
    "SCHEMES",
    "AuthFailed",
    "Blob",
    "Entry",
    "InvalidPath",
    "PreconditionFailed",
    "Store",
    "StoreError",
    "StoreNotFound",
    "Unreachable",
    "open_store",
]


def open_store(
    url: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> Store:
    """The store a remote URL names.

    Args:
        url: ``file:///path``, ``memory://name``, ``webdav(s)://host/path``,
            ``s3://bucket/prefix``, ``seafile(+http)://host/REPO_ID/path``.
        user, password, token: credentials, for the backends that take them.

    Raises:
        StoreError: an unknown scheme, a malformed URL, or a backend whose library is missing
            (the message names the extra to install).
    """
    scheme = urlsplit(url).scheme.lower() if "://" in url else ""
    if scheme not in SCHEMES:
        known = ", ".join(f"{s}://" for s in SCHEMES)
        raise StoreError(f"Unknown remote {url!r}: a remote URL starts with one of {known}.")
    module_name, extra = SCHEMES[scheme]
    try:
        module = importlib.import_module(f".{module_name}", __name__)
    except ImportError as exc:
        if exc.name is None or exc.name.startswith("cairn") or extra is None:
            raise
        raise StoreError(
            f"{scheme}:// remotes need the {exc.name} library: pip install 'cairn-memory[{extra}]'"
        ) from exc
    return module.from_url(url, user=user, password=password, token=token)
