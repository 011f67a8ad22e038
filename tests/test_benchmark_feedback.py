"""Pseudo-relevance feedback as the ablations measure it (benchmarks/feedback.py): a row that
did not search again would report the technique as doing nothing."""

from __future__ import annotations

from pathlib import Path

from benchmarks import ablations, feedback

from cairn import Memory, ranking


def test_feedback_finds_a_note_through_a_word_of_the_first_hits_then_is_put_back(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "vault", home=tmp_path / "home")
    memory.write("Harbour trip", observations=["[plan] sail across the harbour on the ketch"])
    memory.write("Boat care", observations=["[task] varnish the ketch before spring"])
    memory.write("Tax return", observations=["[task] file the tax return by January"])
    plain = [h.title for h in memory.search("harbour")]
    search, build = Memory.search, ranking.Query.build

    row = ablations.Ablation("feedback", feedback.patches(feedback.Feedback(docs=1, terms=10, share=0.5)))
    with ablations.applied(row):
        fed = memory.search("harbour")

    assert plain == ["Harbour trip"]
    assert [h.title for h in fed] == ["Harbour trip", "Boat care"]  # through "ketch", at half its weight
    assert fed[1].score < fed[0].score
    assert (Memory.search, ranking.Query.build) == (search, build)
    assert [h.title for h in memory.search("harbour")] == plain
