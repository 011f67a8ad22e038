"""Cairn: long-term memory for AI agents, kept as plain Markdown."""

from .errors import (
    AlreadyExists,
    CairnError,
    Conflict,
    DamagedNote,
    EditMismatch,
    InvalidInput,
    NotFound,
    ScopeDenied,
    SecretRefused,
)
from .memory import Memory
from .models import Context, DoctorReport, Hit, Note, NoteSummary, Observation, RefreshReport, Relation

__version__ = "0.1.0"

__all__ = [
    "AlreadyExists",
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
