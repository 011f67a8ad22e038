"""``<scope>/dream.json``: the dream's switch (off by default), its model, and its daily schedule.

It lives in the vault, so every process and device that shares the vault obeys the same switch;
it never holds an API key (that comes from ``CAIRN_DREAM_API_KEY`` or ``<home>/dream-key``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import CairnError, InvalidInput
from ..vault import atomic_write
from .files import DREAM_FILE, Place, read_bytes

_HHMM = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class DreamOff(CairnError):
    code = "dream_off"
    exit_code = 12


@dataclass(frozen=True)
class DreamConfig:
    enabled: bool = False
    model: str | None = None
    base_url: str | None = None
    daily_at: str | None = None  # "HH:MM" in the vault's time zone
    last_run_day: str | None = None  # "YYYY-MM-DD", stamped before a scheduled run starts
    last_run_at: str | None = None
    last_status: str | None = None  # "ok", "error", ...
    last_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_daily_at(value: str | None) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not _HHMM.fullmatch(value.strip()):
        raise InvalidInput(f"daily_at {value!r} must be a time of day as HH:MM, e.g. 03:30")
    return value.strip()


def read(place: Place) -> DreamConfig:
    """The scope's dream.json; defaults (off) when there is none.

    A value of the wrong type is ignored (as if absent), so that a hand edit gone wrong leaves the
    dream off rather than running it with half a setting.

    Raises:
        InvalidInput: dream.json is not a JSON object.
    """
    data = read_bytes(place.vault, place.rel(DREAM_FILE))
    if data is None:
        return DreamConfig()
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(
            f"{place.rel(DREAM_FILE)} is not valid JSON ({exc}); fix it or delete it (the dream is then off)"
        ) from exc
    if not isinstance(raw, dict):
        raise InvalidInput(f"{place.rel(DREAM_FILE)} must hold a JSON object")

    def text(name: str) -> str | None:
        value = raw.get(name)
        return value.strip() or None if isinstance(value, str) else None

    daily = text("daily_at")
    day = text("last_run_day")
    return DreamConfig(
        enabled=raw.get("enabled") is True,
        model=text("model"),
        base_url=text("base_url"),
        daily_at=daily if daily and _HHMM.fullmatch(daily) else None,
        last_run_day=day if day and _DAY.fullmatch(day) else None,
        last_run_at=text("last_run_at"),
        last_status=text("last_status"),
        last_note=text("last_note"),
    )


def write(place: Place, config: DreamConfig) -> None:
    """Save ``config`` atomically, keeping any other key a person added to the file."""
    extra: dict[str, Any] = {}
    try:
        data = read_bytes(place.vault, place.rel(DREAM_FILE))
        old = json.loads(data.decode("utf-8")) if data else {}
        if isinstance(old, dict):
            extra = old
    except (UnicodeDecodeError, json.JSONDecodeError, InvalidInput):
        extra = {}
    merged = {**extra, **config.to_dict()}
    text = json.dumps(merged, ensure_ascii=False, indent=2) + "\n"
    atomic_write(place.path(place.rel(DREAM_FILE)), text.encode("utf-8"))


def update(place: Place, **changes: Any) -> DreamConfig:
    """Read, change and save; the caller holds ``place.writing()``."""
    config = replace(read(place), **changes)
    write(place, config)
    return config


def require_on(place: Place) -> DreamConfig:
    """The config, or DreamOff saying how to turn the dream on."""
    config = read(place)
    if not config.enabled:
        raise DreamOff(
            f"the dream is off for scope {place.scope}: nothing was applied. Turn it on with "
            f'`cairn --scope {place.scope} dream on` (or set "enabled": true in {place.rel(DREAM_FILE)})'
        )
    return config


def due(config: DreamConfig, now: datetime) -> bool:
    """True when a scheduled run should start at ``now`` (in the vault's zone): the dream is on,
    has a ``daily_at``, that time has passed today, and today has no run stamped yet."""
    if not config.enabled or not config.daily_at:
        return False
    hour, minute = (int(p) for p in config.daily_at.split(":"))
    if (now.hour, now.minute) < (hour, minute):
        return False
    return config.last_run_day != now.date().isoformat()
