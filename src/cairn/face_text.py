"""Wording shared by the faces (CLI, MCP): errors the library did not word, in the user's terms.

An ``OSError`` that escapes the library (a read-only, immutable or full folder) is turned into one
sentence naming the place and the cause, and the library's parameter names are swapped for the
ones a person types (``--expected 3``) or a model sends (``expected_replacements=3``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["config_warnings", "in_user_words", "os_error_text"]

# ".name.md.1a2b3c.tmp" and the like: the temporary file of an atomic write, not a name the
# user knows; its folder is what they can act on.
_TEMP = re.compile(r"^\..*\.tmp$")


def os_error_text(exc: OSError, vault: os.PathLike[str] | str | None = None) -> str:
    """``cannot write /v/user/X.md: Read-only file system`` from any ``OSError``; an error that
    names no file (a full disk while writing) names the vault instead, when it is known."""
    cause = exc.strerror or type(exc).__name__
    name = exc.filename if exc.filename is not None else exc.filename2
    if name is None:
        return (
            f"cannot write in the vault {os.fspath(vault)}: {cause}"
            if vault
            else f"cannot complete the change: {cause}"
        )
    path = os.fsdecode(name)
    if _TEMP.match(os.path.basename(path)):
        path = os.path.dirname(path) or "."
        return f"cannot write in {path}: {cause}; nothing was changed"
    return f"cannot write {path}: {cause}"


def in_user_words(message: str, names: Mapping[str, str]) -> str:
    """Replace ``name=VALUE`` for each library name with the face's spelling.

    ``names`` maps a library name to a template holding ``{}``: ``{"expected": "--expected {}"}``.
    """
    for name, template in names.items():
        message = re.sub(
            rf"\b{re.escape(name)}=(\S+?)(?=[\s,;.)]|$)", lambda m, t=template: t.format(m[1]), message
        )
    return message


# Keys cairn.toml may hold; a feature that reads a new key adds it here.
KNOWN_CONFIG_KEYS = frozenset(
    {
        "timezone",
        "allow_scopes",
        "sync_interval",
        "observations_max",
        "inject_char_cap",
        "write_mode",
        "proposal_ttl",
    }
)


def config_warnings(vault: os.PathLike[str] | str) -> list[str]:
    """One line per unknown key in ``<vault>/cairn.toml``, with the nearest known key."""
    import difflib
    import tomllib
    from pathlib import Path

    path = Path(vault) / "cairn.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, or unreadable (load_config reports that one)
        return []
    section = data.get("cairn", data)
    if not isinstance(section, dict):
        return []
    warnings = []
    for key in section:
        if key in KNOWN_CONFIG_KEYS or (key == "cairn" and section is data):
            continue
        near = difflib.get_close_matches(key, sorted(KNOWN_CONFIG_KEYS), n=1, cutoff=0.6)
        hint = (
            f"; did you mean {near[0]!r}?"
            if near
            else f"; known keys: {', '.join(sorted(KNOWN_CONFIG_KEYS))}"
        )
        warnings.append(f"{path}: unknown key {key!r} is ignored{hint}")
    return warnings
