"""Dates as words: a date written in digits or in Chinese also names its month in English.

An agent writes ``2026-10-14``; a person asks about "October" or ``10月``. Keyword search only
meets them if one side is written as the other, so :func:`month_words` reads the month out of a
date written in digits (``2026-10-14``, ``2026/3/5``, ``2025-09``), in Chinese (``10月14日``,
``十月``) or as an English abbreviation beside a number (``Oct 14``, ``14 Oct``), and names it as
English spells it (``october``). The index holds those words beside the text's own tokens, and
a day written with a leading zero also without it (``2026-03-05``: ``5``).

A query asks for a date's month by that name alone, and for its year and day as numbers without
leading zeros (:func:`as_asked`): ``3月5日复查`` asks for ``march``, ``5`` and ``复查``, not for
the ``3`` or ``月`` that a note writing ``March 5`` lacks, nor for the pair ``日复``, which a note
writing ``2026-03-05`` lacks. ``Nov 8`` asks for ``november`` and ``8``.

A bare number is never read as a month (``10`` alone is ten of anything), nor a run of digits
that could be an identifier (``20260312``), nor a date inside a longer code (``NE-2025-0412``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["MONTHS", "VERSION", "as_asked", "month_words"]

# Part of the index schema version: a change here changes the terms an index holds.
VERSION = "months/1"

MONTHS = [
    *("january", "february", "march", "april", "may", "june"),
    *("july", "august", "september", "october", "november", "december"),
]
_ABBREVIATIONS = {name[:3]: name for name in MONTHS} | {"sept": "september"}
del _ABBREVIATIONS["may"]  # the whole word: it gives its own token
_MONTH_OF = {short: MONTHS.index(name) + 1 for short, name in _ABBREVIATIONS.items()}
# How a Chinese date writes a month before 月.
_MONTH_NUMERALS = (
    {str(n): n for n in range(1, 13)}
    | {f"0{n}": n for n in range(1, 10)}
    | {c: n for n, c in enumerate("一二三四五六七八九十", 1)}
    | {"十一": 11, "十二": 12}
)
_NUMBER_CHARS = frozenset("0123456789一二三四五六七八九十〇零两")  # 13月 is no month, nor 三十月

# Year, month and perhaps day, one separator throughout, and not a longer code or number. The
# character before is checked apart: a pattern that starts with a look-behind tries every
# position of the text, one that starts with a digit skips ahead fast.
_NUMERIC_RE = re.compile(
    r"((?:19|20)\d\d)([-/.])(1[0-2]|0?[1-9])(?:\2([12]\d|3[01]|0?[1-9]))?(?!\d|[-/.]\d)", re.ASCII
)
_CODE_CHARS = frozenset("./-_")  # before a year: part of a code (v2023.11, NE-2025-0412)
# Around 月: the year before it, and the day after it (日 or 号: 3月5号).
_CHINESE_YEAR_RE = re.compile(r"(?<!\d)((?:19|20)\d\d) ?年 ?\Z")
_CHINESE_DAY_RE = re.compile(r"份|(?: ?([12]\d|3[01]|0?[1-9]) ?[日号])")
# Two patterns, each starting where a search can skip ahead fast.
_ENGLISH_BEFORE_RE = re.compile(rf"\b({'|'.join(_ABBREVIATIONS)})\b\.?[ \t-]?\d", re.ASCII)
_ENGLISH_AFTER_RE = re.compile(rf"\d[ \t-]?({'|'.join(_ABBREVIATIONS)})\b", re.ASCII)


class _Date(NamedTuple):
    """Where a date is written in a text, and what it says (no leading zeros)."""

    start: int
    end: int
    year: str  # empty when the text leaves it out, or writes it apart (Oct 14 2026)
    month: int
    day: str
    padded: bool = False  # the day was written with a leading zero


def month_words(text: str) -> list[str]:
    """The months named by the dates in ``text`` (folded: lower case, NFKC), as English words,
    with the day of a date written with a leading zero, without it (``05``: ``5``); in text
    order, each once."""
    words = (w for date in _dates(text) for w in (MONTHS[date.month - 1], date.day if date.padded else ""))
    return list(dict.fromkeys(w for w in words if w))


def as_asked(text: str) -> str:
    """A folded query with its dates written as a query asks for them: the month by its name,
    the year and day as numbers without leading zeros (``2026年3月5日复查`` and
    ``2026-03-05 复查`` -> ``2026 march 5 复查``, ``十月`` -> ``october``, ``nov 8`` ->
    ``november 8``). A note holds the month's name whichever way it writes the date."""
    pieces: list[str] = []
    end = 0
    for date in _dates(text):
        if date.start >= end:  # a date inside another is already replaced (nov in 2026-nov-08)
            written = " ".join(filter(None, [date.year, MONTHS[date.month - 1], date.day]))
            pieces += [text[end : date.start], " ", written, " "]
            end = date.end
    return "".join([*pieces, text[end:]]) if pieces else text


def _dates(text: str) -> list[_Date]:
    found: list[_Date] = []
    for match in _NUMERIC_RE.finditer(text):
        before = text[match.start() - 1] if match.start() else " "
        if not (before.isascii() and before.isalnum()) and before not in _CODE_CHARS:  # 于2026-10-14 is
            year, _, month, day = match.groups(default="")
            found.append(_Date(match.start(), match.end(), year, int(month), day.lstrip("0"), day[:1] == "0"))
    at = text.find("月")
    while at > 0:
        if date := _chinese_date(text, at):
            found.append(date)
        at = text.find("月", at + 1)
    for pattern in (_ENGLISH_BEFORE_RE, _ENGLISH_AFTER_RE):
        for match in pattern.finditer(text):
            found.append(_Date(match.start(1), match.end(1), "", _MONTH_OF[match[1]], ""))
    return sorted(found)


def _chinese_date(text: str, at: int) -> _Date | None:
    """The date whose 月 is ``text[at]``, with the year before it and the day after it if written;
    None when no month numeral comes right before it."""
    numeral_end = at - 1 if text[at - 1] == " " else at  # 12 月: spaced as many write it
    for start in (numeral_end - 2, numeral_end - 1):  # 十一月 before 一月
        if start >= 0 and (month := _MONTH_NUMERALS.get(text[start:numeral_end])):
            break
    else:
        return None
    if start and text[start - 1] in _NUMBER_CHARS:
        return None
    year = _CHINESE_YEAR_RE.search(text, max(0, start - 7), start)
    day = _CHINESE_DAY_RE.match(text, at + 1)  # 份, or the day
    return _Date(
        year.start() if year else start,
        day.end() if day else at + 1,
        year[1] if year else "",
        month,
        day[1].lstrip("0") if day and day[1] else "",
    )
