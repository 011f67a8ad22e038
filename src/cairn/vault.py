"""Where notes live on disk: scopes, safe file names, permalinks, times and atomic writes."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import unicodedata
from collections.abc import Container
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, NamedTuple

from .errors import FolderUnwritable, InvalidInput

SCOPE_KINDS = ("agent", "group", "workspace")
_SCOPE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # fullmatch: "$" would let a final newline through
# Characters that are unsafe in a file name on some platform, plus control characters.
_UNSAFE = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}
_MAX_NAME_BYTES = 200  # leaves room for ".md", conflict suffixes and temp names under the usual 255


def nfc(text: str) -> str:
    """``text`` in Unicode's composed form (NFC), as Cairn keeps folders and permalinks: macOS
    writes names decomposed."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def bare_permalink(identifier: str) -> str:
    """``memory://x`` or ``x`` (with stray spaces) -> ``x``, in NFC as notes hold them."""
    ident = identifier.strip()
    return nfc(ident[len("memory://") :] if ident.startswith("memory://") else ident)


def validate_scope(scope: str) -> str:
    """Return ``scope`` if it is ``user``, ``agent:<id>``, ``group:<id>`` or ``workspace:<slug>``."""
    if scope == "user":
        return scope
    kind, sep, ident = scope.partition(":")
    if not sep or kind not in SCOPE_KINDS or not _SCOPE_ID.fullmatch(ident):
        raise InvalidInput(
            f"invalid scope {scope!r}: use 'user', 'agent:<id>', 'group:<id>' or 'workspace:<slug>' "
            "with ids of letters, digits, '_' and '-'"
        )
    return scope


def scope_folder(scope: str) -> str:
    """``agent:bot-1`` -> ``agent-bot-1``; ``user`` -> ``user``."""
    validate_scope(scope)
    return scope.replace(":", "-", 1)


def folder_scope(folder: str) -> str | None:
    """The scope a top-level vault folder holds, or None when it is not a scope folder."""
    if folder == "user":
        return "user"
    kind, sep, ident = folder.partition("-")
    if sep and kind in SCOPE_KINDS and _SCOPE_ID.match(ident):
        return f"{kind}:{ident}"
    return None


def _truncate_utf8(text: str, limit: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


def safe_filename(title: str) -> str:
    """A file name (without ``.md``) for ``title``: never a path, never hidden, never reserved."""
    name = re.sub(r"\s+", " ", unicodedata.normalize("NFC", title))
    name = _UNSAFE.sub("_", name).strip(" .")
    name = _truncate_utf8(name, _MAX_NAME_BYTES).strip(" .")
    if not name.strip("_ ."):
        raise InvalidInput(f"title {title!r} gives an empty file name; use letters, digits or CJK characters")
    if name.lower() in _WINDOWS_RESERVED:
        name += "_"
    return name


def safe_folder(folder: str) -> str:
    """Normalise a folder inside a scope: ``courses/2026`` stays, ``../x`` and ``/abs`` are refused."""
    if not folder or folder.strip() in ("", ".", "/"):
        return ""
    if folder.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", folder):
        raise InvalidInput(f"folder {folder!r} must be relative to the scope, not absolute")
    parts = []
    for raw in re.split(r"[/\\]+", folder.strip()):
        if raw in ("", "."):
            continue
        if raw == ".." or raw.startswith("."):
            raise InvalidInput(f"folder {folder!r} may not contain '..' or hidden parts like {raw!r}")
        parts.append(safe_filename(raw))
    return "/".join(parts)


def slugify(title: str) -> str:
    """Lower-case slug that keeps CJK characters: ``数据结构（2026 秋）`` -> ``数据结构-2026-秋``."""
    text = unicodedata.normalize("NFKC", title).casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    slug = re.sub(r"[^\w]+", "-", text).replace("_", "-")
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    return _truncate_utf8(slug, 60).strip("-") or "note"


def make_permalink(title: str, scope: str, taken: Container[str]) -> str:
    """``{slug}-{4 hex}`` unique among ``taken``; the hex is derived, so retries are deterministic."""
    slug = slugify(title)
    for attempt in range(10_000):
        digest = hashlib.sha256(f"{scope}\x00{title}\x00{attempt}".encode()).hexdigest()[:4]
        permalink = f"{slug}-{digest}"
        if permalink not in taken:
            return permalink
    return f"{slug}-{secrets.token_hex(4)}"


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- time --------------------------------------------------------------------------------------


def parse_timezone(value: str | None) -> tzinfo:
    """``+08:00``, ``UTC`` or an IANA name; None -> this machine's local offset."""
    if not value:
        return datetime.now().astimezone().tzinfo or UTC
    match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", value.strip())
    if match:
        sign = 1 if match[1] == "+" else -1
        return timezone(sign * timedelta(hours=int(match[2]), minutes=int(match[3])))
    if value.strip().upper() in ("UTC", "Z"):
        return UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # imported here: rarely needed, ~10 ms at startup

    try:
        return ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInput(
            f"unknown time zone {value!r} in cairn.toml: use '+08:00' or a name like 'Asia/Shanghai'"
        ) from exc


def now_iso(tz: tzinfo) -> str:
    return datetime.now(tz).replace(microsecond=0).isoformat()


def iso_to_ts(value: object, tz: tzinfo) -> float | None:
    """Seconds since the epoch for an ISO 8601 date or time; None if unparseable. A time without
    an offset is in ``tz``, the vault's zone, as the bounds of a search are (``parse_moment``)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.timestamp()


_RELATIVE = re.compile(r"^\s*(\d+)\s*(s|sec|m|min|h|d|w|y)[a-z]*\s*$", re.IGNORECASE)
_UNIT_SECONDS = {
    "s": 1,
    "sec": 1,
    "m": 60,
    "min": 60,
    "h": 3600,
    "d": 86400,
    "w": 7 * 86400,
    "y": 365 * 86400,
}


def parse_moment(value: str, tz: tzinfo, *, end_of_day: bool = False) -> float:
    """A user-given bound as epoch seconds: ``2026-11-01``, ``2026-11-01T08:00``, or ``7d``/``12h`` ago.

    A bare date means the start of that day in the vault's time zone (its end when ``end_of_day``).
    """
    text = value.strip()
    relative = _RELATIVE.match(text)
    if relative:
        unit = relative[2].lower()
        seconds = int(relative[1]) * _UNIT_SECONDS.get(unit, _UNIT_SECONDS.get(unit[:1], 86400))
        return datetime.now(UTC).timestamp() - seconds
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(
            f"cannot read {value!r} as a time: use an ISO date like 2026-11-01, a time like "
            "2026-11-01T08:00+08:00, or a span back from now like 7d, 12h, 2w"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        moment += timedelta(days=1) - timedelta(microseconds=1)
    return moment.timestamp()


# -- files -------------------------------------------------------------------------------------


class FolderError(FolderUnwritable):
    """A folder of the vault cannot be written (read-only, immutable, full): nothing was left there."""

    def __init__(self, folder: Path, exc: OSError) -> None:
        cause = {
            errno.EROFS: "the file system is read-only",
            errno.EACCES: "permission denied",
            errno.EPERM: "the folder is immutable or not ours to change",
            errno.ENOSPC: "the disk is full",
            errno.EDQUOT: "the disk quota is used up",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        super().__init__(f"cannot write in {folder}: {cause}; nothing was written")
        self.folder = folder


def write_temp(path: Path, data: bytes) -> Path:
    """``data`` in a new temp file beside ``path``, flushed to disk; the caller renames it. A
    folder that cannot be written raises ``FolderError`` naming it, with no temp file left."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderError(path.parent, exc) from exc
    tmp = path.parent / f".{path.name[:50]}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise FolderError(path.parent, exc) from exc
        raise
    return tmp


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old bytes or the new, never a mix.

    The temp file sits in the same directory (a rename across file systems is not atomic); a
    failure to remove it never hides the first error.
    """
    tmp = write_temp(path, data)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FolderError(path.parent, exc) from exc
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename itself is still atomic
    finally:
        os.close(fd)


class FileStat(NamedTuple):
    path: str  # vault-relative, "/"-separated
    size: int
    mtime_ns: int


def utf8_name(name: str) -> bool:
    """False for a file name that is not UTF-8 on disk (Python hands it over with surrogate
    escapes): it could be neither stored in the index nor shown, so such a file is passed over."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def inside_vault(vault: Path, path: Path) -> bool:
    """True if ``path`` (a note, or where one is about to be written) is in the vault and not
    reached through a symbolic link: Cairn neither reads nor writes through links, which could
    lead out of the vault, and the scan passes them over too."""
    real_vault = os.path.realpath(vault)
    if os.path.realpath(path.parent) != os.path.join(real_vault, os.path.relpath(path.parent, vault)):
        return False  # a folder on the way is a link
    return not path.is_symlink()


# Listing a folder through an open descriptor makes each entry's stat an ``fstatat`` on its bare
# name: the kernel no longer walks the vault's path for every note (about a tenth of a scan at
# 10k notes). Where ``scandir`` takes no descriptor (Windows), folders are listed by path.
_SCAN_BY_FD = os.scandir in os.supports_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
# Gone, not a folder, not ours to read, or swapped for a link since it was listed (O_NOFOLLOW).
_UNLISTABLE = {errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP}


# Written by the dream at the top of a scope folder (DESIGN section 2): generated, never notes, so
# that index.md's links to every entity do not lift them in search.
GENERATED_FILES = ("index.md", "log.md")
# Proposals of approval mode (issue 35) wait in ``<scope>/proposals/`` for a person: changes not
# made yet, so never notes (search must not find a change nobody approved).
GENERATED_FOLDERS = ("proposals",)


def generated_file(rel: str) -> bool:
    """True for ``<scope>/index.md``, ``<scope>/log.md`` and files under ``<scope>/proposals/``,
    which the scan passes over."""
    folder, _, name = rel.partition("/")
    if folder_scope(folder) is None:
        return False
    return name in GENERATED_FILES or ("/" in name and name.split("/", 1)[0] in GENERATED_FOLDERS)


def scan_notes(vault: Path) -> dict[str, tuple[int, int]]:
    """Every ``*.md`` note under a scope folder, as path -> (size, mtime_ns), in no set order;
    hidden folders (.trash, .conflict, ...) are skipped.

    Runs before every call of a process without a watcher, so it is kept lean: one ``scandir``
    per folder, one ``stat`` per note, no recursion, no sorting.
    """
    try:
        top = [e.name for e in os.scandir(vault) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return {}
    found: dict[str, tuple[int, int]] = {}
    stack = [(os.path.join(vault, name), name + "/") for name in top if folder_scope(name)]
    while stack:
        directory, prefix = stack.pop()
        try:
            fd = os.open(directory, _DIR_FLAGS) if _SCAN_BY_FD else None
        except OSError as exc:
            if exc.errno in _UNLISTABLE:
                continue
            raise
        try:
            with os.scandir(directory if fd is None else fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith(".") or (name in GENERATED_FILES and prefix.count("/") == 1):
                        continue
                    if name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        found[prefix + name] = (st.st_size, st.st_mtime_ns)
                    elif entry.is_dir(follow_symlinks=False):
                        if name in GENERATED_FOLDERS and prefix.count("/") == 1:
                            continue
                        stack.append((os.path.join(directory, name), prefix + name + "/"))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        finally:
            if fd is not None:
                os.close(fd)
    return found


@dataclass(frozen=True)
class VaultConfig:
    """Settings from ``<vault>/cairn.toml`` (all optional)."""

    timezone: str | None = None
    allow_scopes: tuple[str, ...] | None = None
    sync_interval: float = 300.0  # seconds after which a call syncs a vault with its remote first
    extra: dict[str, Any] = field(default_factory=dict)


def load_config(vault: Path) -> VaultConfig:
    path = vault / "cairn.toml"
    if not path.exists():
        return VaultConfig()
    import tomllib  # imported here: most vaults have no cairn.toml; it costs ~5-10 ms at startup

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    section = data.get("cairn", data)
    allow = section.get("allow_scopes")
    if allow is not None:
        if not isinstance(allow, list) or not allow or not all(isinstance(s, str) for s in allow):
            raise InvalidInput(f"{path}: allow_scopes must be a list of one or more scope names")
        allow = tuple(validate_scope(s) for s in allow)
    tz = section.get("timezone")
    if tz is not None and not isinstance(tz, str):
        raise InvalidInput(f"{path}: timezone must be a string like '+08:00' or 'Asia/Shanghai'")
    interval = section.get("sync_interval", 300)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 <= interval <= 86400:
        raise InvalidInput(f"{path}: sync_interval must be a number of seconds from 0 to 86400 (default 300)")
    return VaultConfig(timezone=tz, allow_scopes=allow, sync_interval=float(interval), extra=dict(section))
