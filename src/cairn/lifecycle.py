"""Fields that say how long a note holds and what it replaces (seed 004): ``expires``,
``supersedes`` and the optional ``knowledge`` block with its ``claim``.

Reading is lenient (a person's hand-made value that does not fit is ignored, never fatal);
writing through Cairn is strict (a bad value is refused with a clear message).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from .errors import InvalidInput
from .vault import bare_permalink, parse_moment

_CLAIM_KEY = re.compile(r"[a-z0-9._:-]{1,128}")  # used with fullmatch
MAX_CONDITIONS = 4
MAX_ITEM_BYTES = 256


@dataclass(frozen=True)
class Knowledge:
    """When a lesson applies, when it failed, and the one value it claims for a key."""

    applicability: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    claim_key: str | None = None
    claim_value: str | None = None

    def text(self) -> str:
        """What search indexes of the block."""
        parts = [*self.applicability, *self.counterexamples]
        if self.claim_key:
            parts.append(f"{self.claim_key} {self.claim_value or ''}")
        return "\n".join(parts)


def expires_at(front: Mapping[str, Any], tz: tzinfo) -> float | None:
    """``expires`` as epoch seconds; a bare date expires at the end of that day."""
    value = front.get("expires")
    if value in (None, ""):
        return None
    try:
        return parse_moment(str(value), tz, end_of_day=True)
    except InvalidInput:
        return None


def supersedes(front: Mapping[str, Any]) -> tuple[str, ...]:
    value = front.get("supersedes")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(bare_permalink(str(v)) for v in value if str(v).strip()))


def knowledge(front: Mapping[str, Any]) -> Knowledge | None:
    block = front.get("knowledge")
    if not isinstance(block, Mapping):
        return None
    claim = block.get("claim")
    key = value = None
    if (
        isinstance(claim, Mapping)
        and isinstance(claim.get("key"), str)
        and _CLAIM_KEY.fullmatch(claim["key"])
    ):
        key = claim["key"]
        value = None if claim.get("value") is None else str(claim.get("value"))
    return Knowledge(_strings(block.get("applicability")), _strings(block.get("counterexamples")), key, value)


def validate(fields: Mapping[str, Any], tz: tzinfo) -> None:
    """Refuse ``expires``, ``supersedes`` or ``knowledge`` values that would be read differently."""
    if "expires" in fields and fields["expires"] not in (None, ""):
        parse_moment(str(fields["expires"]), tz)  # raises InvalidInput with the accepted forms
    if "supersedes" in fields:
        value = fields["supersedes"]
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
            raise InvalidInput("supersedes must be a permalink or a list of permalinks")
    if "knowledge" in fields:
        _validate_knowledge(fields["knowledge"])


def _validate_knowledge(block: Any) -> None:
    if not isinstance(block, Mapping):
        raise InvalidInput("knowledge must be a mapping with applicability, counterexamples and/or claim")
    unknown = set(block) - {"applicability", "counterexamples", "claim"}
    if unknown:
        raise InvalidInput(
            f"knowledge has unknown keys {sorted(unknown)}; use applicability, counterexamples, claim"
        )
    for name in ("applicability", "counterexamples"):
        items = block.get(name, [])
        if not isinstance(items, list) or len(items) > MAX_CONDITIONS:
            raise InvalidInput(f"knowledge.{name} must be a list of at most {MAX_CONDITIONS} strings")
        for item in items:
            if not isinstance(item, str) or not 1 <= len(item.encode("utf-8")) <= MAX_ITEM_BYTES:
                raise InvalidInput(f"each knowledge.{name} item must be text of 1-{MAX_ITEM_BYTES} bytes")
    claim = block.get("claim")
    if claim is None:
        return
    if not isinstance(claim, Mapping) or set(claim) - {"key", "value"}:
        raise InvalidInput("knowledge.claim must be {key: ..., value: ...}")
    if not isinstance(claim.get("key"), str) or not _CLAIM_KEY.fullmatch(claim["key"]):
        raise InvalidInput("knowledge.claim.key must be 1-128 characters of a-z, 0-9 and . _ : -")
    if len(str(claim.get("value", "")).encode("utf-8")) > MAX_ITEM_BYTES:
        raise InvalidInput(f"knowledge.claim.value must be at most {MAX_ITEM_BYTES} bytes")


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value[:MAX_CONDITIONS] if str(v).strip())
