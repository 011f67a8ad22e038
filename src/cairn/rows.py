"""A note as the index knows it (``Row``), the columns that hold it, and the views made of one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from .models import NoteSummary

NOTE_COLUMNS = (
    "n.id, n.path, n.scope, n.folder, n.permalink, n.title, n.type, n.tags, n.created, n.modified, "
    "n.sensitivity, n.modified_ts, n.expires_ts, n.claim_key, n.claim_value, n.hash, n.origin, n.frontmatter"
)
N = NOTE_COLUMNS.count(",") + 1  # the Row fields, then a query's own columns


class NoteKey(NamedTuple):
    """The columns of a note that tell whether it may be shown, and where it is."""

    id: int
    permalink: str
    scope: str
    sensitivity: str | None
    expires_ts: float | None


@dataclass(frozen=True)
class Row:
    """A note as the index knows it: enough to rank, filter and show without opening the file."""

    id: int
    path: str
    scope: str
    folder: str
    permalink: str
    title: str
    type: str
    tags: tuple[str, ...]
    created: str
    modified: str
    sensitivity: str
    modified_ts: float | None
    expires_ts: float | None = None
    claim_key: str | None = None
    claim_value: str | None = None
    version: str = ""
    origin: str | None = None
    frontmatter: str = "{}"  # JSON; parsed only where a field is needed

    @classmethod
    def from_sql(cls, values: Sequence[Any]) -> Row:
        v = list(values[:N])
        v[7] = tuple(json.loads(v[7] or "[]"))  # tags
        v[8], v[9], v[10] = v[8] or "", v[9] or "", v[10] or "normal"  # created, modified, sensitivity
        v[15], v[17] = v[15] or "", v[17] or "{}"  # version, frontmatter
        return cls(*v)


def summary(row: Row) -> NoteSummary:
    return NoteSummary(
        permalink=row.permalink,
        title=row.title,
        type=row.type,
        tags=row.tags,
        scope=row.scope,
        path=row.path,
        created=row.created,
        modified=row.modified,
        sensitivity=row.sensitivity,
    )


def expires_text(row: Row) -> str | None:
    if row.expires_ts is None:
        return None
    return datetime.fromtimestamp(row.expires_ts, UTC).replace(microsecond=0).isoformat()
