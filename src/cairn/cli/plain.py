"""Pydantic-free conversion of plain option values, so that ``cairn search`` starts fast.

Typer converts every parameter through a Pydantic TypeAdapter; importing Pydantic and building
the adapters costs more (~150 ms) than a whole ``cairn search`` on 10,000 notes. Cairn's
parameters are all plain (str, int, bool, Path, list[str]), so they are converted here exactly as
Typer would convert them; anything else goes to Typer's own conversion.
"""

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["use_plain_coercion"]

_CANONICAL_INT = re.compile(r"-?[1-9][0-9]{0,17}|0")  # int(text) and Pydantic agree on these
_SLOW = object()  # "not a plain value: let Typer convert it"


def _plain_coercion(param: Any) -> Any:
    """A converter for one Typer parameter that takes plain values without Pydantic, or None.

    Typer converts every parameter through a Pydantic TypeAdapter; importing Pydantic and building
    the adapters costs more (~150 ms) than a whole ``cairn search`` on 10,000 notes. Cairn's
    parameters are all plain (str, int, bool, Path, list[str]), so the values a command normally
    gets are converted here as Typer would convert them. Anything else (a malformed or
    out-of-range number, an unreadable path, bytes...) goes to Typer's own conversion, so errors
    and their messages are Typer's, unchanged.
    """
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None)
    if desc is None or info is None or getattr(desc, "file_annotation", None) is not None:
        return None
    if getattr(info, "parser", None) is not None:
        return None
    annotation = desc.annotation
    multi = bool(param.multiple or param.nargs == -1)
    if multi:
        if annotation != list[str]:
            return None

        def fast(value: Any) -> Any:
            if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
                return list(value)
            return _SLOW

    elif annotation is str:

        def fast(value: Any) -> Any:
            return value if type(value) is str else _SLOW

    elif annotation is bool:  # flags already give a bool (Typer skips them); --help gives None

        def fast(value: Any) -> Any:
            return value if type(value) is bool else _SLOW

    elif annotation is int and not getattr(info, "clamp", False):
        low, high = info.min, info.max

        def fast(value: Any) -> Any:
            if type(value) is str and _CANONICAL_INT.fullmatch(value):
                value = int(value)
            if type(value) is not int:
                return _SLOW
            in_range = (low is None or value >= low) and (high is None or value <= high)
            return value if in_range else _SLOW

    elif annotation is Path and _default_path_checks(info):

        def fast(value: Any) -> Any:
            if type(value) is not str or not value or "\0" in value:
                return _SLOW
            # Typer's only check for a plain Path option: if the path exists it must be readable.
            if os.path.exists(value) and not os.access(value, os.R_OK):
                return _SLOW
            return Path(value)

    else:
        return None

    def coerce(value: Any, *, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if multi else None
        converted = fast(value)
        if converted is _SLOW:
            return type(param).get_runtime_param(param).coerce(value, param=param, ctx=ctx)
        return converted

    return coerce


def _default_path_checks(info: Any) -> bool:
    return (
        getattr(info, "path_type", None) is None
        and not getattr(info, "exists", True)
        and getattr(info, "file_okay", False)
        and getattr(info, "dir_okay", False)
        and not getattr(info, "writable", True)
        and not getattr(info, "resolve_path", True)
        and not getattr(info, "allow_dash", True)
    )


class _PlainRuntimeParam:
    """Stands in for Typer's runtime parameter (same ``coerce`` call) on the plain path."""

    __slots__ = ("coerce",)

    def __init__(self, coerce: Any) -> None:
        self.coerce = coerce


def use_plain_coercion(params: list[Any]) -> None:
    for param in params:
        if getattr(param, "_cairn_plain", False) or not hasattr(type(param), "get_runtime_param"):
            continue
        param._cairn_plain = True
        coerce = _plain_coercion(param)
        if coerce is not None:
            runtime = _PlainRuntimeParam(coerce)
            param.get_runtime_param = lambda runtime=runtime: runtime
