"""Dates read as words: the month a date names, and how a query asks for a date."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.dates import MONTHS, as_asked, month_words
from cairn.tokenize import fold, index_text, query_terms


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("2026-10-14", ["october"]),
        ("due 2026/3/5, paid 2026.04.01", ["march", "april", "1"]),
        ("2026-03-05T09:00", ["march", "5"]),  # a day written with a leading zero: also without
        ("租约 2025-09 至 2026-08", ["september", "august"]),
        ("于2026-10-14开会", ["october"]),  # a Chinese character before a date is no code
        ("10月14日", ["october"]),
        ("2026年3月5日复查", ["march"]),
        ("大作业 12 月第 2 周截止", ["december"]),  # spaced between digits and characters
        ("十月、十一月和十二月", ["october", "november", "december"]),
        ("Oct 14 standup, 14 Sept 2026, oct. 3", ["october", "september"]),
        ("14-Nov-2026", ["november"]),
    ],
)
def test_a_date_names_its_month(text: str, words: list[str]) -> None:
    assert month_words(fold(text)) == words


@pytest.mark.parametrize(
    "text",
    [
        "10 people, room 3",  # a bare number is no month
        "AE-20260312-05",  # digits run together: an identifier
        "NE-ASSENT-2025-0412",  # a date inside a longer code
        "v2023.11 and 2026-10-14-2",
        "2026-13-01",  # no thirteenth month
        "三个月 正月 13月 二十月",  # months counted, the lunar first month, no month at all
        "Jan said the doctor will march in",  # abbreviations and month words without a number
        "may 5",  # the word itself is its own token
    ],
)
def test_what_is_not_a_date_names_no_month(text: str) -> None:
    assert month_words(fold(text)) == []


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("2026年3月5日复查", "2026 march 5 复查"),
        ("2026 年 3 月 5 日复查", "2026 march 5 复查"),
        ("3月份的账单", "march 的账单"),
        ("5号楼 十月", "5号楼 october"),  # 号 is a day only right after a month
        ("2026-03-05 复查", "2026 march 5 复查"),
        ("dentist nov 8", "dentist november 8"),
        ("月租 2026", "月租 2026"),
    ],
)
def test_a_query_asks_for_a_date_as_numbers_and_whole_month_names(query: str, asked: str) -> None:
    assert " ".join(as_asked(fold(query)).split()) == asked


def test_every_form_of_a_date_meets_every_other() -> None:
    # What each query asks for, a note that writes the date any other way holds.
    written = ["2026-03-05 复查", "2026年3月5日复查", "复查 March 5", "复查 5 Mar 2026"]
    asked = ["March 5 复查", "3月5日复查", "复查 2026-03-05", "Mar 5 复查"]
    for note in written:
        held = set(index_text(note, stem=True).split())
        for query in asked:
            missing = set(query_terms(query, stem=True)) - held
            assert missing <= {"2026"}, (note, query, missing)  # a note may leave the year out


@given(
    st.lists(
        st.sampled_from(
            [*"0123456789-/. ", "年", "月", "日", "号", "份", "十", "二", "个", "Oct", "may", "x"]
        ),
        max_size=24,
    )
)
def test_any_text_names_only_months_and_days_and_keeps_the_rest(pieces: list[str]) -> None:
    text = fold("".join(pieces))
    assert all(w in MONTHS or (w.isdigit() and 1 <= int(w) <= 9) for w in month_words(text))
    asked = as_asked(text)
    if not month_words(text):
        assert asked == text  # a text that names no month is asked as it is
