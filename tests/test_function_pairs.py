"""Chinese function pairs in a query (issue 37 item 5): one that no note holds costs nothing, one
that some note holds is asked for at its IDF instead of being dropped."""

from __future__ import annotations

import pytest

from cairn import Memory, tokenize
from cairn.search import analysis


def test_the_pairs_left_out_as_function_words_are_named() -> None:
    assert tokenize.function_pairs("我用的空调是什么牌子？") == [
        "我用",
        "用的",
        "的空",
        "调是",
        "是什",
        "什么",
        "么牌",
    ]
    assert tokenize.function_pairs("空调牌子") == []


def test_a_function_pair_a_note_holds_counts_and_one_no_note_holds_costs_nothing(memory: Memory) -> None:
    memory.write("客厅", observations=["[家] 我家用的是格力空调"])
    memory.write("卧室", observations=["[家] 格力空调装在卧室"])  # newer: first on a tie
    top = memory.search("我用的空调是什么牌子？", limit=2)
    assert [h.title for h in top] == ["客厅", "卧室"]
    # 什么, 是什, 么牌 ... are in no note: the newer note holds all the rest, and says so.
    assert memory.search("格力空调是什么？", limit=1)[0].coverage == pytest.approx(1.0)


def test_left_out_they_would_tie(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "FUNCTION_PAIRS_BY_IDF", False)
    memory.write("客厅", observations=["[家] 我家用的是格力空调"])
    memory.write("卧室", observations=["[家] 格力空调装在卧室"])
    assert [h.title for h in memory.search("我用的空调是什么牌子？", limit=2)] == ["卧室", "客厅"]
