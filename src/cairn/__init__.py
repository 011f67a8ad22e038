"""Cairn: long-term memory for AI agents, kept as plain Markdown."""

from typing import TYPE_CHECKING, Any

from .errors import (
    AlreadyExists,
    Busy,
    CairnError,
    Conflict,
    DamagedNote,
    EditMismatch,
    InvalidInput,
    NotFound,
    ScopeDenied,
    SecretRefused,
)

if TYPE_CHECKING:
    from .memory import Memory
    from .models import Context, DoctorReport, Hit, Note, NoteSummary, Observation, RefreshReport, Relation

__version__ = "0.1.0"

__all__ = [
    "AlreadyExists",
    "Busy",
    "CairnError",
    "Conflict",
    "Context",
    "DamagedNote",
    "DoctorReport",
    "EditMismatch",
    "Hit",
    "InvalidInput",
    "Memory",
    "Note",
    "NoteSummary",
    "NotFound",
    "Observation",
    "RefreshReport",
    "Relation",
    "ScopeDenied",
    "SecretRefused",
]

# Memory and the models are imported on first use (PEP 562): importing the package (as
# ``python -m cairn`` and ``cairn.cli`` do) then costs nothing, and ``cairn --help`` or a usage
# error never loads the index, ranking and tokenizer modules (~100 ms).
_LAZY = {
    "Memory": "memory",
    **dict.fromkeys(
        ["Context", "DoctorReport", "Hit", "Note", "NoteSummary", "Observation", "RefreshReport", "Relation"],
        "models",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
