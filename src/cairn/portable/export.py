"""A vault's notes as one ``cairn-export`` document (see ``document`` for a record)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CairnError
from ..models import Damaged
from ..vault import atomic_write, now_iso
from .document import FORMAT, VERSION, record_of

if TYPE_CHECKING:
    from ..memory import Memory


@dataclass(frozen=True)
class Export:
    """The document, and the files left out because they could not be read as notes."""

    document: dict[str, Any]
    skipped: tuple[Damaged, ...] = ()
    sensitive_left_out: int = 0
    notes: int = field(default=0)

    def to_json(self) -> str:
        return json.dumps(self.document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"

    def report(self, out: str | None = None) -> dict[str, Any]:
        return {
            "out": out,
            "notes": self.notes,
            "sensitive_left_out": self.sensitive_left_out,
            "skipped": [d.to_dict() for d in self.skipped],
        }


def export(memory: Memory, scopes: Sequence[str] | None = None, *, include_sensitive: bool = False) -> Export:
    """Every note of ``scopes`` (default: every scope ``memory`` may touch), by scope and path.

    Notes marked ``sensitivity: sensitive``, and ``#sensitive`` observation lines of other notes,
    are left out unless ``include_sensitive``. Damaged files are left out and listed in ``skipped``.
    """
    notes, skipped = memory.notes_for_export(list(scopes) if scopes else None)
    records: list[dict[str, Any]] = []
    left_out = 0
    damaged = list(skipped)
    for note in notes:
        if note.sensitive and not include_sensitive:
            left_out += 1
            continue
        try:
            records.append(record_of(note, include_sensitive=include_sensitive))
        except CairnError as exc:
            damaged.append(Damaged(note.path, exc.message))
    records.sort(key=lambda r: (r["scope"], r["path"]))
    document = {"format": FORMAT, "version": VERSION, "exported": now_iso(memory.tz), "notes": records}
    return Export(document, tuple(damaged), left_out, len(records))


def write_document(export_: Export, out: Path) -> None:
    """Write the document to ``out`` atomically (a half-written export is never left behind)."""
    atomic_write(out, export_.to_json().encode("utf-8"))
