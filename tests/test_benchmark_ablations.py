"""The ablation harness (benchmarks/ablations.py): a row that switched nothing would report a
technique as worthless, and a switch left on would skew every later row."""

from __future__ import annotations

import pytest
from benchmarks import ablations

from cairn import ranking


def test_every_row_switches_a_setting_that_exists_to_another_value() -> None:
    for row in ablations.ablations():
        for owner, name, value in row.patches:
            assert hasattr(owner, name), f"{row.label}: {owner.__name__}.{name} no longer exists"  # type: ignore[attr-defined]
            assert getattr(owner, name) != value, f"{row.label}: {name} is already {value!r}"


def test_a_switch_is_put_back_even_when_its_row_fails() -> None:
    before = ranking.NOTE_SHARE
    row = ablations.Ablation("no note share", ((ranking, "NOTE_SHARE", before + 1),))
    with pytest.raises(RuntimeError), ablations.applied(row):
        assert before + 1 == ranking.NOTE_SHARE
        raise RuntimeError("the row failed")
    assert before == ranking.NOTE_SHARE


def test_a_setting_that_does_not_exist_is_an_error_not_a_new_attribute() -> None:
    row = ablations.Ablation("renamed", ((ranking, "NO_SUCH_SETTING", 1.0),))
    with pytest.raises(AttributeError), ablations.applied(row):
        raise AssertionError("the row ran with a setting that does not exist")
    assert not hasattr(ranking, "NO_SUCH_SETTING")


def test_stems_made_before_a_switch_do_not_outlive_it() -> None:
    from cairn import english, tokenize

    assert tokenize.stem("went") == "go"
    row = ablations.Ablation("no word forms", ((english, "base_form", lambda word: word),))
    with ablations.applied(row):
        assert tokenize.stem("went") == "went"
    assert tokenize.stem("went") == "go"
