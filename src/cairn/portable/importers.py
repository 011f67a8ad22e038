"""Records (see ``document``) read from other tools' memory, without touching the source.

- A basic-memory project or an Obsidian vault is a folder of Markdown files: each ``*.md`` file
  becomes a note at the same path under the target scope, its front matter kept as it is. A file
  without ``created``/``modified`` gets them from its own mtime, so its dates survive the copy
  (the copy's mtime would be the day of the import). Dot-folders (``.obsidian``, ``.trash``,
  ``.git``) are passed over, symbolic links are never followed (files or folders), and a file
  that does not parse, is too large or is not UTF-8 is reported and skipped.
- mem0's exported memories (``Memory.get_all()``'s ``{"results": [...]}``, or the bare list older
  versions return; each item ``{"id", "memory", "hash", "created_at", "updated_at", "user_id",
  "agent_id", "run_id", "metadata", "categories"}``) become observations, one line each, in one
  note per owner (``user_id``, else ``agent_id``, else ``run_id``): a mem0 memory is one short
  fact, which is what an observation is; a note per memory would fill the vault with one-line
  files whose titles are the facts themselves.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import CairnError, DamagedNote, InvalidInput
from ..observation_line import is_category
from ..vault import safe_filename, slugify
from .document import json_problem

MAX_NOTE_BYTES = 2 * 1024 * 1024
MAX_SOURCE_BYTES = 256 * 1024 * 1024
FOLDER_KINDS = ("basic-memory", "obsidian")


@dataclass(frozen=True)
class Skipped:
    """Something of the source that was not imported, and why."""

    source: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "reason": self.reason}


@dataclass(frozen=True)
class Source:
    """Records read from a source (with where each came from), and what was passed over."""

    records: list[dict[str, Any]]
    origins: list[str]
    skipped: list[Skipped]


# -- folders --------------------------------------------------------------------------------------


def read_folder(root: Path, scope: str, tz: Any) -> Source:
    """Every Markdown note under ``root`` as a record for ``scope``; nothing in ``root`` changes.

    Raises:
        InvalidInput: ``root`` is not a folder.
    """
    if not root.is_dir():
        raise InvalidInput(f"{root} is not a folder")
    records: list[dict[str, Any]] = []
    origins: list[str] = []
    skipped: list[Skipped] = []
    stack = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(prefix or ".", f"cannot list the folder: {exc.strerror}"))
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                skipped.append(Skipped(rel, "a symbolic link, which Cairn does not follow"))
            elif entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel + "/"))
            elif entry.name.lower().endswith(".md") and entry.is_file(follow_symlinks=False):
                try:
                    records.append(_file_record(Path(entry.path), rel, scope, tz))
                    origins.append(rel)
                except CairnError as exc:
                    skipped.append(Skipped(rel, exc.message))
    order = sorted(range(len(records)), key=lambda i: origins[i])
    return Source([records[i] for i in order], [origins[i] for i in order], skipped)


def _file_record(path: Path, rel: str, scope: str, tz: Any) -> dict[str, Any]:
    from .. import markdown

    try:
        # O_NOFOLLOW: a file swapped for a link since the folder was listed is not read either.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise InvalidInput(
            "a symbolic link, which Cairn does not follow"
            if exc.errno == errno.ELOOP
            else exc.strerror or str(exc)
        ) from None
    with open(fd, "rb") as file:
        st = os.fstat(file.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InvalidInput("not a regular file")
        if st.st_size > MAX_NOTE_BYTES:
            raise InvalidInput(f"{st.st_size / 1048576:.1f} MiB; a note holds at most 2 MiB")
        data = file.read(MAX_NOTE_BYTES + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not valid UTF-8 at byte {exc.start}") from None
    try:
        doc = markdown.parse(text)
    except DamagedNote as exc:
        raise InvalidInput(exc.message) from None
    front = dict(doc.frontmatter)
    if problem := json_problem(front):
        raise InvalidInput(problem)
    stamp = datetime.fromtimestamp(st.st_mtime, tz).replace(microsecond=0).isoformat()
    for name in ("created", "modified"):
        front.setdefault(name, stamp)
    return {"scope": scope, "path": rel, "title": "", "frontmatter": front, "body": doc.body}


# -- mem0 -----------------------------------------------------------------------------------------

_OWNERS = ("user_id", "agent_id", "run_id")
_TAG_UNSAFE = re.compile(r"[\s#(),\[\]]+")


def read_mem0(path: Path, scope: str) -> Source:
    """mem0's memories in ``path`` as one record per owner, each memory one observation.

    Raises:
        InvalidInput: the file is not JSON, or not a list of memories (nor ``{"results": [...]}``).
    """
    from .. import guard, markdown

    data = load_json(path)
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InvalidInput(f"{path}: expected mem0's memories: a list, or an object with 'results'")
    owners: dict[tuple[str, str], list[tuple[str, str, str, dict[str, Any]]]] = {}
    skipped: list[Skipped] = []
    for number, item in enumerate(items):
        where = f"results[{number}]"
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("memory"), str)
            or not item["memory"].strip()
        ):
            skipped.append(Skipped(where, "no 'memory' text"))
            continue
        ident = str(item.get("id") or "")
        try:
            line = _mem0_line(item)
            guard.check_text(line, where="memory")
        except CairnError as exc:
            skipped.append(Skipped(f"{where} {ident}".strip(), exc.message))
            continue
        kind, owner = next(((k, str(item[k])) for k in _OWNERS if item.get(k)), ("owner", "unknown"))
        times = (
            str(item.get("created_at") or ""),
            str(item.get("updated_at") or item.get("created_at") or ""),
        )
        owners.setdefault((kind, owner), []).append((times[0], ident, line, {"updated": times[1]}))
    records: list[dict[str, Any]] = []
    origins: list[str] = []
    for (kind, owner), memories in sorted(owners.items()):
        memories.sort(key=lambda m: (m[0], m[1]))
        title = f"mem0 memories of {kind.removesuffix('_id')} {' '.join(owner.split())}"[:200]
        created = min((m[0] for m in memories if m[0]), default="")
        modified = max((m[3]["updated"] for m in memories if m[3]["updated"]), default="")
        front: dict[str, Any] = {
            "title": title,
            "type": "note",
            "permalink": f"mem0-{slugify(kind + ' ' + owner)}",
            "tags": ["mem0"],
        }
        front |= {"created": created} if created else {}
        front |= {"modified": modified} if modified else {}
        front |= {"origin": "mem0", "source": "mem0", f"mem0_{kind}": owner}
        text = markdown.new_note(front, title, "", [m[2] for m in memories])
        body = markdown.parse(text).body
        records.append(
            {
                "scope": scope,
                "path": f"mem0/{safe_filename(title)}.md",
                "title": title,
                "frontmatter": front,
                "body": body,
            }
        )
        origins.append(f"{kind} {owner} ({len(memories)} memories)")
    return Source(records, origins, skipped)


def _mem0_line(item: dict[str, Any]) -> str:
    """``[category] memory #more-categories (mem0 <id> · <created_at>)``, on one line."""
    from .. import markdown

    content = " ".join(item["memory"].split())
    raw = item.get("categories")
    categories = [" ".join(str(c).split()) for c in raw if str(c).strip()] if isinstance(raw, list) else []
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    for name in ("category", "type"):
        if isinstance(metadata.get(name), str) and metadata[name].strip():
            categories.append(" ".join(metadata[name].split()))
    categories = [c for c in categories if is_category(c) and not re.search(r"[\[\]]", c)]
    category = categories[0] if categories else "fact"
    tags = [t for c in categories[1:] if (t := _TAG_UNSAFE.sub("-", c).strip("-"))]
    where = " · ".join(
        p for p in (f"mem0 {item['id']}" if item.get("id") else "", str(item.get("created_at") or "")) if p
    )
    return markdown.format_observation(
        category, content, tags, " ".join(where.replace("(", "[").replace(")", "]").split()) or None
    )


def load_json(path: Path) -> Any:
    """The JSON value in ``path``; InvalidInput naming the line and column of a syntax error."""
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InvalidInput(f"{path} is {size / 1048576:.0f} MiB; the largest file read is 256 MiB")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not valid UTF-8 at byte {exc.start}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput(f"{path}: nested too deeply to read") from None
