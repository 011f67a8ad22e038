"""Observations: draft signals an agent writes into ``<scope>/inbox/``, one file each.

An observation is a pure create (``files.create_exclusive``), so writers on several processes or
devices never overwrite one another. A dream archives it into ``inbox/archived/`` with
``status: archived``; an archived observation also gets ``expires`` (the time it was handled),
which keeps it out of search and snapshots by default while the file stays for audit.
"""

from __future__ import annotations

import secrets
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import guard
from ..errors import DamagedNote, InboxFull, InvalidInput, NotFound
from ..vault import content_hash, now_iso
from .files import ARCHIVED, INBOX, Change, Place, create_exclusive, note_files, read_bytes

MAX_CHARS = 2000
MAX_TAGS = 20
MAX_SOURCE_CHARS = 100
DEFAULT_MAX_OPEN = 200


@dataclass(frozen=True)
class Observation:
    id: str
    path: str  # vault-relative
    content: str
    tags: tuple[str, ...]
    durable: bool | None
    source: str | None
    created: str
    status: str
    rev: str
    text: str  # the whole file

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "tags": list(self.tags),
            "durable": self.durable,
            "source": self.source,
            "created": self.created,
            "rev": self.rev,
            "path": self.path,
        }


def _normal(content: str) -> str:
    return unicodedata.normalize("NFC", content.replace("\r\n", "\n")).strip()


def parse(rel: str, data: bytes) -> Observation:
    """An inbox file as an observation; a hand-made file without front matter is an open one.

    Raises:
        DamagedNote: not UTF-8, or front matter that does not parse.
    """
    from .. import markdown

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedNote(f"{rel}: not valid UTF-8 at byte {exc.start}") from exc
    doc = markdown.parse(text)
    front = doc.frontmatter
    stem = rel.rsplit("/", 1)[-1][: -len(".md")]
    tags = front.get("tags")
    durable = front.get("durable")
    return Observation(
        id=str(front.get("id") or stem),
        path=rel,
        content=_normal(doc.body),
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        durable=durable if isinstance(durable, bool) else None,
        source=str(front["source"]) if front.get("source") not in (None, "") else None,
        created=str(front.get("created") or ""),
        status=str(front.get("status") or "open"),
        rev=content_hash(data),
        text=text,
    )


def open_observations(place: Place) -> tuple[list[Observation], list[str]]:
    """The scope's open observations, oldest first, and the inbox files that could not be read."""
    folder = place.path(place.rel(INBOX))
    names = note_files(folder)
    found: list[Observation] = []
    damaged: list[str] = []
    for name in names:
        rel = place.rel(INBOX, name)
        try:
            data = read_bytes(place.vault, rel)
            if data is None:
                continue
            obs = parse(rel, data)
        except (DamagedNote, InvalidInput):
            damaged.append(rel)
            continue
        if obs.status == "open":
            found.append(obs)
    found.sort(key=lambda o: (o.created, o.id))
    return found, damaged


def find_open(place: Place, observation_id: str) -> Observation | None:
    """The open observation with this id (its file is ``inbox/<id>.md``), or None."""
    if not isinstance(observation_id, str) or "/" in observation_id or "\\" in observation_id:
        return None
    if observation_id.startswith(".") or not observation_id:
        return None
    rel = place.rel(INBOX, f"{observation_id}.md")
    try:
        data = read_bytes(place.vault, rel)
        obs = parse(rel, data) if data is not None else None
    except (DamagedNote, InvalidInput):
        return None
    if obs is None or obs.status != "open":
        return None
    return obs


def clean_tags(tags: Sequence[str]) -> list[str]:
    if isinstance(tags, str):
        tags = [tags]
    out: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput(f"a tag must be text, got {tag!r}")
        clean = unicodedata.normalize("NFC", tag.strip().lstrip("#").strip())
        if any(c in clean for c in "\n\r\t"):
            raise InvalidInput(f"a tag must be one line without tabs: {tag!r}")
        if clean:
            out[clean] = None
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags per observation, got {len(out)}")
    return list(out)


def observe(
    place: Place,
    content: str,
    *,
    tags: Sequence[str] = (),
    durable: bool | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """Write one observation; the caller holds ``place.writing()`` so that the duplicate check and
    the count of open observations hold for every process on this machine.

    Returns:
        ``{"id", "duplicate", "open", "capacity", "path"}``.
    Raises:
        InvalidInput: empty or longer than ``MAX_CHARS`` characters (never cut), bad tags or source.
        SecretRefused: the content, a tag or the source holds a credential.
        InboxFull: ``observations_max`` observations are open in the scope.
    """
    from .. import markdown

    if not isinstance(content, str):
        raise InvalidInput("an observation's content must be text")
    text = _normal(content)
    if not text:
        raise InvalidInput("an observation needs some text")
    if len(text) > MAX_CHARS:
        raise InvalidInput(
            f"an observation holds at most {MAX_CHARS} characters; this one has {len(text)}. "
            "Split it into shorter observations (nothing was written)"
        )
    clean = clean_tags(tags)
    if source is not None:
        source = " ".join(str(source).split())
        if len(source) > MAX_SOURCE_CHARS:
            raise InvalidInput(f"source is at most {MAX_SOURCE_CHARS} characters")
    if durable is not None and not isinstance(durable, bool):
        raise InvalidInput("durable must be true, false or left out")
    guard.check_text(text, where="observation")
    guard.check_text("\n".join(clean), where="tags")
    if source:
        guard.check_text(source, where="source")
    capacity = place.setting("observations_max", DEFAULT_MAX_OPEN, least=1)
    current, _damaged = open_observations(place)
    for obs in current:
        if obs.content == text:
            return {
                "id": obs.id,
                "duplicate": True,
                "open": len(current),
                "capacity": capacity,
                "path": obs.path,
            }
    if len(current) >= capacity:
        raise InboxFull(
            f"the inbox of scope {place.scope} holds {len(current)} open observations, its limit "
            f"(observations_max = {capacity} in cairn.toml): run a dream (cairn dream run) to "
            "consolidate them, or raise the limit"
        )
    front: dict[str, Any] = {}
    for _attempt in range(20):
        stamp = datetime.now(place.tz).strftime("%Y%m%d%H%M%S")
        obs_id = f"obs-{stamp}-{secrets.token_hex(3)}"
        front = {
            "id": obs_id,
            "type": "observation",  # search shows hits of drafts with this type
            "permalink": obs_id,
            "created": now_iso(place.tz),
            "status": "open",
            "tags": clean,
        }
        if source:
            front["source"] = source
        if durable is not None:
            front["durable"] = durable
        data = (markdown.set_fields("", front) + "\n" + text + "\n").encode("utf-8")
        rel = place.rel(INBOX, f"{obs_id}.md")
        try:
            create_exclusive(place.path(rel), data)
        except FileExistsError:
            continue
        return {"id": obs_id, "duplicate": False, "open": len(current) + 1, "capacity": capacity, "path": rel}
    raise InvalidInput("could not find a free observation name in 20 tries; try again")


def archive(place: Place, obs: Observation, outcome: Mapping[str, Any]) -> list[Change]:
    """The changes that move ``obs`` to ``inbox/archived/`` with ``status: archived``.

    ``outcome`` (``{"outcome": "promoted", "promoted_to": ...}``) is added to its front matter.
    """
    from .. import markdown

    now = now_iso(place.tz)
    updates = {"status": "archived", "archived": now, "expires": now, **outcome}
    text = markdown.set_fields(obs.text, updates)
    name = obs.path.rsplit("/", 1)[-1]
    target = place.rel(INBOX, ARCHIVED, name)
    number = 2
    while place.path(target).exists():  # a hand copy of the same name: never overwrite it
        target = place.rel(INBOX, ARCHIVED, f"{name[:-3]} ({number}).md")
        number += 1
    return [Change(target, None, text.encode("utf-8")), Change(obs.path, obs.rev, None)]


def settle(place: Place, observation_id: str, outcome: str, reason: str | None) -> dict[str, Any]:
    """A person archives or drops one open observation by hand (no dream needed): it moves to
    ``inbox/archived/`` with ``outcome``, and log.md says so. The caller holds the write lock."""
    from . import dream, files

    if outcome not in ("archived", "dropped"):
        raise InvalidInput("outcome must be 'archived' or 'dropped'")
    if reason:
        guard.check_text(reason, where="reason")
    obs = find_open(place, observation_id)
    if obs is None:
        raise NotFound(f"no open observation {observation_id!r} in scope {place.scope}")
    fields = {"outcome": outcome, **({"reason": reason.strip()} if reason else {})}
    files.commit(place.vault, archive(place, obs, fields))
    text = f"- {outcome} by hand: {obs.id}" + (f" ({reason.strip()})" if reason else "")
    log = dream.append_log(place, {"kind": "settle", "trigger": "person", "outcome": outcome}, text)
    return {"id": obs.id, "outcome": outcome, "log": log}
