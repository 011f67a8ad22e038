"""How an observation line starts: ``- [category] text``.

The parser (``cairn.markdown``) reads whole observations with it; search reads only the category,
to weigh a line whose category names a word asked (``cairn.ranking``), and must not load the
parser and YAML to do so.
"""

from __future__ import annotations

import re

OBSERVATION = re.compile(r"[ \t]*[-*][ \t]+\[([^\[\]]*)\][ \t]+(.*)")  # category, then the rest
_CHECKBOXES = frozenset({" ", "x", "X"})  # "- [x] done" is a task list item, not an observation


def is_category(text: str) -> bool:
    """Whether the text between the brackets names a category."""
    return text not in _CHECKBOXES and bool(text.strip())


def category_of(line: str) -> str | None:
    """The category of an observation line (None for any other line)."""
    m = OBSERVATION.match(line)
    return m[1] if m and is_category(m[1]) else None
