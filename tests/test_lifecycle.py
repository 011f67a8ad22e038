"""expires, supersedes, knowledge/claims and sensitive observations, seen through search."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import InvalidInput, Memory, links


def titles(hits) -> list[str]:
    return [h.title for h in hits]


def test_expired_notes_are_out_unless_asked(memory: Memory) -> None:
    memory.write("Promo", observations=["[deal] coupon for pizza"], fields={"expires": "2020-01-01"})
    memory.write("Still valid", observations=["[deal] coupon for noodles"], fields={"expires": "2099-01-01"})
    assert titles(memory.search("coupon")) == ["Still valid"]
    hits = memory.search("coupon", include_expired=True)
    assert set(titles(hits)) == {"Promo", "Still valid"}
    assert next(h for h in hits if h.title == "Promo").expires.startswith("2020-01-01")


# 0: every lookup first reads which permalinks are superseded at all, as a snapshot of a vault
# with thousands of preferences does; 10,000: every lookup asks for its rows' permalinks directly.
@pytest.mark.parametrize("few_targets", [0, 10_000])
def test_a_superseded_note_comes_after_its_replacement(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, few_targets: int
) -> None:
    monkeypatch.setattr(links, "_FEW_TARGETS", few_targets)
    old = memory.write("Home address", observations=["[fact] lives in Haidian district, building 3"])
    new = memory.write(
        "Moved house", observations=["[fact] now lives in Chaoyang"], fields={"supersedes": [old.permalink]}
    )
    hits = memory.search("Haidian building")
    assert titles(hits) == ["Moved house", "Home address"]  # the replacement is brought in, first
    assert hits[1].superseded_by == (new.permalink,)
    assert hits[0].superseded_by == ()
    assert titles(memory.search("lives")) == ["Moved house", "Home address"]
    snap = memory.snapshot("lives")
    assert [i.title for i in snap.items] == ["Moved house"] and snap.omitted["superseded"] == (old.permalink,)


def test_knowledge_is_searchable_and_claims_disagree_openly(memory: Memory) -> None:
    memory.write(
        "Atlas recovery (journal)",
        observations=["[lesson] restore from the journal"],
        fields={
            "knowledge": {
                "applicability": ["only schema v2 with a verified migration log"],
                "counterexamples": ["schema v1 has no migration log"],
                "claim": {"key": "atlas.recovery.mode", "value": "journal"},
            }
        },
    )
    memory.write(
        "Atlas recovery (copy)",
        observations=["[lesson] restore by copying the data dir"],
        fields={"knowledge": {"claim": {"key": "atlas.recovery.mode", "value": "copy"}}},
    )
    assert titles(memory.search("migration log"))[0] == "Atlas recovery (journal)"
    hits = memory.search("journal")
    assert set(titles(hits)) == {"Atlas recovery (journal)", "Atlas recovery (copy)"}
    for hit in hits:
        assert hit.claim.key == "atlas.recovery.mode"
        assert [c.value for c in hit.disagreement] == ["copy" if hit.claim.value == "journal" else "journal"]


def test_agreeing_claims_are_not_a_disagreement(memory: Memory) -> None:
    for title in ("Port A", "Port B"):
        memory.write(
            title,
            observations=["[fact] the port"],
            fields={"knowledge": {"claim": {"key": "svc.port", "value": "8080"}}},
        )
    hits = memory.search("port")
    assert sorted(h.title for h in hits) == ["Port A", "Port B"]
    assert all(h.claim.value == "8080" and h.disagreement == () for h in hits)


def test_sensitive_observations_stay_out_of_search_and_snippets(memory: Memory) -> None:
    memory.write("Health", observations=["[habit] runs every morning", "[med] takes metformin #sensitive"])
    assert memory.search("metformin") == []
    hit = memory.search("morning")[0]
    assert "metformin" not in hit.snippet
    assert memory.search("metformin", granularity="line") == []
    assert titles(memory.search("metformin", include_sensitive=True)) == ["Health"]


def test_a_note_never_replaces_itself_and_of_two_that_replace_each_other_one_is_current(
    memory: Memory, vault: Path
) -> None:
    note = memory.write("Loop", observations=["[fact] zebra crossing"])
    with pytest.raises(InvalidInput, match="supersede itself"):
        memory.write("Loop", fields={"supersedes": [note.permalink]}, overwrite=True)
    path = vault / note.path  # by hand, the write path's check is not there to stop it
    path.write_text(
        path.read_text(encoding="utf-8").replace("title: Loop", f"title: Loop\nsupersedes: {note.permalink}"),
        encoding="utf-8",
    )
    assert [(h.title, h.superseded_by) for h in memory.search("zebra")] == [("Loop", ())]
    assert [i.title for i in memory.snapshot("zebra").items] == ["Loop"]
    other = memory.write(
        "Loop two", observations=["[fact] zebra stripes"], fields={"supersedes": [note.permalink]}
    )
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            f"supersedes: {note.permalink}", f"supersedes: {other.permalink}"
        ),
        encoding="utf-8",
    )
    hits = memory.search("zebra")
    current = [h.title for h in hits if not h.superseded_by]
    assert len(current) == 1 and len(hits) == 2  # one of the pair, never neither
    assert [i.title for i in memory.snapshot("zebra").items] == current


def _related(hit) -> list[tuple[str, str]]:
    return [(r.type, r.target) for r in hit.related]


def test_related_links_never_show_a_sensitive_note_or_line_unless_asked(memory: Memory) -> None:
    memory.write("Dentist", observations=["[place] clinic on Main street"])
    memory.write("Lab result", observations=["[result] see [[Dentist]]"], sensitivity="sensitive")
    memory.write(
        "Diary",
        observations=[
            "[day] quiet day at the clinic",
            "[health] saw [[Oncologist Lee]] about a biopsy #sensitive",
        ],
        relations=["visited [[Dentist]]"],
    )
    dentist = memory.search("dentist clinic")[0]
    assert dentist.title == "Dentist"
    assert [r.target for r in dentist.related] == ["Diary"]  # not the sensitive "Lab result"
    diary = next(h for h in memory.search("quiet clinic") if h.title == "Diary")
    assert _related(diary) == [("visited", "Dentist")]  # not the link on the #sensitive line
    asked = memory.search("dentist clinic", include_sensitive=True)
    assert {r.target for r in next(h for h in asked if h.title == "Dentist").related} == {
        "Diary",
        "Lab result",
    }
    diary = next(h for h in memory.search("quiet clinic", include_sensitive=True) if h.title == "Diary")
    assert ("links_to", "Oncologist Lee") in _related(diary)


def test_a_sensitive_replacement_is_not_named_unless_asked(memory: Memory) -> None:
    old = memory.write("Home address", observations=["[fact] lives at 12 Elm Road"])
    new = memory.write(
        "Address after the move",
        observations=["[fact] shelter"],
        sensitivity="sensitive",
        fields={"supersedes": [old.permalink]},
    )
    assert [(h.title, h.superseded_by) for h in memory.search("address Elm")] == [("Home address", ())]
    asked = memory.search("address Elm", include_sensitive=True)
    assert next(h for h in asked if h.title == "Home address").superseded_by == (new.permalink,)
    snap = memory.snapshot("address")
    assert new.permalink not in snap.text and "Elm Road" not in snap.text


def test_context_wildcards_and_hops_pass_over_sensitive_notes_unless_asked(memory: Memory) -> None:
    memory.write("Bank notes", observations=["[fact] recovery phrase apple banana"], sensitivity="sensitive")
    bakery = memory.write("Bakery", observations=["[fact] good bread"], relations=["near [[Bank notes]]"])
    memory.write("Baker", observations=["[fact] early riser"], relations=["works_at [[Bakery]]"])
    shown = memory.context("memory://ba*")
    assert sorted(n.title for n in shown.primary) == ["Baker", "Bakery"]
    hops = memory.context(f"memory://{bakery.permalink}")
    assert [n.note.title for n in hops.related] == ["Baker"]
    asked = memory.context("memory://ba*", include_sensitive=True)
    assert sorted(n.title for n in asked.primary) == ["Baker", "Bakery", "Bank notes"]
    hops = memory.context(f"memory://{bakery.permalink}", include_sensitive=True)
    assert sorted(n.note.title for n in hops.related) == ["Baker", "Bank notes"]


def test_a_sensitive_note_stays_sensitive_with_a_tab_before_a_comment(memory: Memory) -> None:
    (memory.vault / "user").mkdir(parents=True, exist_ok=True)
    (memory.vault / "user" / "Therapy.md").write_text(
        "---\ntitle: Therapy\nsensitivity: sensitive\t# never show this\n---\n\n- [fact] sees Dr Wu weekly\n",
        encoding="utf-8",
    )
    assert memory.read("Therapy").sensitivity == "sensitive"
    assert memory.search("weekly") == []
    assert titles(memory.search("weekly", include_sensitive=True)) == ["Therapy"]


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
def test_a_character_python_splits_lines_on_does_not_shift_line_numbers(
    memory: Memory, separator: str
) -> None:
    # Only "\n" ends a line in a note. Counting these as line breaks once moved every later line
    # number, so a #sensitive observation was taken for an ordinary line and found by default.
    memory.write(
        "Clinic",
        body=f"pasted text{separator}with a break inside",
        observations=["[habit] walks to the clinic", "[med] takes metformin #sensitive"],
    )
    assert memory.search("metformin") == []
    assert memory.search("metformin", granularity="line") == []
    hit = memory.search("walks clinic", granularity="line")[0]
    file_lines = (memory.vault / hit.path).read_text(encoding="utf-8").split("\n")
    assert "walks to the clinic" in file_lines[hit.line - 1]
    assert "metformin" not in hit.snippet


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"expires": "someday"}, "ISO date"),
        ({"supersedes": 3}, "supersedes"),
        ({"knowledge": {"claim": {"key": "Has Spaces", "value": "x"}}}, "claim.key"),
        ({"knowledge": {"applicability": ["a"] * 5}}, "at most 4"),
        ({"knowledge": {"oops": 1}}, "unknown keys"),
    ],
)
def test_bad_lifecycle_fields_are_refused(memory: Memory, fields: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.write("Bad", fields=fields)
