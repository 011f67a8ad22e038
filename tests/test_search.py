"""Search through the Memory service: filters, ranking, snippets, relations, visibility."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn import InvalidInput, Memory, ranking
from cairn.search import linked as linked_module


@pytest.fixture
def filled(memory: Memory) -> Memory:
    for i in range(12):
        memory.write(f"Filler {i}", observations=[f"[misc] unrelated entry number {i}"])
    return memory


def titles(hits) -> list[str]:
    return [h.title for h in hits]


def best(memory: Memory, query: str) -> tuple[str, float | None]:
    """The title and coverage of the best hit: (title, 1.0) when that note holds all that was asked."""
    top = memory.search(query, limit=1)[0]
    return top.title, top.coverage


def test_field_weights_title_over_tags_over_body(filled: Memory) -> None:
    filled.write("Body mention", observations=["[note] the word zephyr appears here"])
    filled.write("Tagged", tags=["zephyr"], observations=["[note] nothing else"])
    filled.write("Zephyr", observations=["[note] the name says it"])
    assert titles(filled.search("zephyr")) == ["Zephyr", "Tagged", "Body mention"]


def test_chinese_partial_words_and_mixed_language(filled: Memory) -> None:
    filled.write("数据结构（2026 秋）", tags=["课程"], observations=["[teacher] 邓俊辉"])
    filled.write("Python 作业", tags=["homework"], observations=["[task] 用 Python 写 FTS5 索引"])
    assert titles(filled.search("数据"))[0] == "数据结构（2026 秋）"
    assert titles(filled.search("数据结构课"))[0] == "数据结构（2026 秋）"
    assert titles(filled.search("结构"))[0] == "数据结构（2026 秋）"
    assert titles(filled.search("python 索引"))[0] == "Python 作业"
    assert titles(filled.search("ＰＹＴＨＯＮ"))[0] == "Python 作业"  # full-width folds to ASCII
    assert titles(filled.search("homew"))[0] == "Python 作业"  # a prefix of a word


def test_traditional_and_simplified_chinese_find_each_other(filled: Memory) -> None:
    filled.write("學校", observations=["[fee] 孩子讀的是台北市立國小，學費每學期五千"])
    filled.write("咖啡习惯", observations=["[drink] 每天早上一杯拿铁，不加糖"])
    for query, title in (("学费", "學校"), ("國小 學費", "學校"), ("拿鐵", "咖啡习惯"), ("拿铁", "咖啡习惯")):
        assert best(filled, query) == (title, 1.0), query
    # Function words fold first, then leave a Traditional question as they leave a Simplified one.
    assert best(filled, "學費是多少呢") == ("學校", 1.0)
    line = filled.search("国小", granularity="line", limit=1)[0]
    assert "國小" in line.snippet  # the note is shown as it was written
    # A long line is cut around the word asked for, found in either script.
    filled.write("長文", body="這是一段很長的說明。" * 40 + "最後提到了颱風警報。")
    line = filled.search("台风警报", granularity="line", limit=1)[0]
    assert line.title == "長文" and "颱風警報" in line.snippet


def test_a_compound_is_found_hyphenated_together_or_apart(filled: Memory) -> None:
    filled.write("Home network", observations=["[access] the Wi-Fi password is on the router"])
    filled.write("Router", observations=["[model] a TPLink Archer in the hallway"])
    filled.write("Phone", observations=["[model] an iPhone15 with a cracked case"])
    for query, title in (
        ("wifi", "Home network"),
        ("wi fi password", "Home network"),
        ("tp-link", "Router"),
        ("tp link archer", "Router"),
        ("iphone 15", "Phone"),
    ):
        top = filled.search(query, limit=1)[0]
        assert (top.title, top.coverage) == (title, 1.0), query
        line = filled.search(query, granularity="line", limit=1)[0]
        assert (line.title, line.line) == (title, top.line), query


def test_letters_and_digits_written_together_find_them_written_apart(filled: Memory) -> None:
    filled.write("Phone", observations=["[model] an iPhone 15 Pro with a cracked case"])
    filled.write("Laptop", observations=["[os] the ThinkPad runs Win 11 and Python 3.12"])
    filled.write("Camera", observations=["[model] Nikon Z50 with the kit lens"])
    for query, title in (("iphone15", "Phone"), ("win11 python3.12", "Laptop"), ("z50", "Camera")):
        assert best(filled, query) == (title, 1.0), query
    assert filled.search("iphone16", limit=1)[0].coverage < 1.0  # asked as iphone and 16


@pytest.mark.parametrize(
    ("notes", "found"),
    [
        pytest.param(
            {
                "Office move": "[plan] we organised the colour scheme of the new centre",
                "Lab": "[data] the samples were analyzed at the gray building",
            },
            [("organized color center", "Office move"), ("center", "Office move"), ("analysed grey", "Lab")],
            id="british-and-american-spellings",
        ),
        pytest.param(
            {
                "Lisbon trip": "[trip] we went to Lisbon and bought azulejo tiles",
                "Dentist": "[visit] two teeth filled, the children were seen too",
                "Porto trip": "[plan] we go to Porto to buy port wine",
            },
            [
                ("go Lisbon buy tiles", "Lisbon trip"),
                ("bought", "Lisbon trip"),
                ("tooth", "Dentist"),
                ("went Porto", "Porto trip"),
            ],
            id="irregular-forms-and-their-base",
        ),
        pytest.param(
            {
                "Dentist": "[visit] appt on Tuesday, bring the insurance card",
                "Ledger": "[infra] the DB runs on two replicas",
            },
            [("dentist appointment", "Dentist"), ("database replica", "Ledger"), ("db", "Ledger")],
            id="clipped-forms-and-the-word-they-clip",
        ),
        pytest.param(
            {
                "Cluster": "[infra] twelve VMs behind the load balancer",
                "Team metrics": "[goal] each KPI reviewed monthly",
                "Code review": "[rule] two approvals on PRs",
            },
            [("VM balancer", "Cluster"), ("KPIs", "Team metrics"), ("PR approvals", "Code review")],
            id="plural-acronyms-and-their-singular",
        ),
    ],
)
def test_a_word_written_another_way_finds_its_note(
    filled: Memory, notes: dict[str, str], found: list[tuple[str, str]]
) -> None:
    # A query of one word is the hard case: no other word of it brings its line to be read.
    for title, line in notes.items():
        filled.write(title, observations=[line])
    for query, title in found:
        assert best(filled, query) == (title, 1.0), query


def test_a_date_in_digits_or_chinese_meets_its_month_named(filled: Memory) -> None:
    # Each note writes its date one way; every query asks another way. Written before the right
    # note, the wrong one is newer and would win a tie on the word both hold.
    filled.write("Incident 2026-10-14: consumer lag", observations=["[cause] a slow rebalance"])
    filled.write("Incident in June", observations=["[cause] a full disk"])
    checkup = filled.write(
        "复查安排", observations=["[drugs] 复查后去药房拿药", "[visit] 2026-03-05 去医院复查血压"]
    )
    filled.write("复查提醒", observations=["[visit] 下次复查在五月"])
    filled.write("Dentist", observations=["[visit] 2026年11月8日 下午三点 cleaning"])
    filled.write("Dentist bill", observations=["[paid] 120 for the cleaning"])
    for query, title in (
        ("incident in October", "Incident 2026-10-14: consumer lag"),
        ("March 5 复查", "复查安排"),
        ("3月5日复查", "复查安排"),
        ("dentist Nov 8", "Dentist"),
        ("dentist 2026-11-08", "Dentist"),
    ):
        assert best(filled, query) == (title, 1.0), query
    dated = next(o.line for o in filled.read(checkup.permalink).observations if "2026" in o.content)
    assert filled.search("复查 March", granularity="line", limit=1)[0].line == dated  # not the first line
    # A bare number is no month, and a date inside a code is none either.
    filled.write("Ticket", observations=["[id] NE-ASSENT-2025-0412 stays open"])
    assert all(h.title != "Ticket" for h in filled.search("April"))


def test_a_short_word_is_not_a_prefix_of_longer_ones(filled: Memory) -> None:
    filled.write("Wallet", observations=["[item] the insurance card is in the wallet"])
    filled.write("Rental", observations=["[plan] rent a car for the weekend"])
    filled.write("Calendar", observations=["[date] the wedding is on a Wednesday"])
    assert titles(filled.search("car")) == ["Rental"]  # not "card"
    assert titles(filled.search("wedding")) == ["Calendar"]  # its stem "wed" is not "wednesday"
    assert titles(filled.search("wednes")) == ["Calendar"]  # four letters or more still are
    assert titles(filled.search("insur")) == ["Wallet"]


def test_one_chinese_character_is_found_at_any_place_in_a_word(filled: Memory) -> None:
    filled.write("开头", observations=["[a] 课表已经发到群里"])
    filled.write("中间", observations=["[a] 上课地点改到三教"])
    filled.write("结尾", observations=["[a] 明天没有课"])
    filled.write("单独", observations=["[a] 课 在 周三"])
    filled.write("无关", observations=["[a] 周末去爬山"])
    hits = filled.search("课", granularity="line")
    assert sorted(h.title for h in hits) == ["中间", "单独", "开头", "结尾"]
    assert all("课" in h.snippet for h in hits)


def test_snippet_is_the_hit_line_with_its_neighbours(filled: Memory) -> None:
    note = filled.write(
        "Trip",
        observations=["[plan] fly on monday", "[hotel] booked the Marigold inn", "[plan] return friday"],
    )
    hit = filled.search("marigold")[0]
    lines = (filled.vault / note.path).read_text(encoding="utf-8").splitlines()
    assert lines[hit.line - 1] == "- [hotel] booked the Marigold inn"
    assert hit.snippet.splitlines() == lines[hit.line - 2 : hit.line + 1]
    assert hit.path == note.path


def test_a_very_long_line_is_shown_around_the_match(memory: Memory) -> None:
    from cairn.search.hits import SNIPPET_LINE_CHARS

    memory.write("Dump", body="lorem ipsum " * 5000 + "the needle is here " + "dolor sit " * 5000)
    hit = memory.search("needle")[0]
    [line] = [line for line in hit.snippet.split("\n") if "needle" in line]
    assert len(line) <= SNIPPET_LINE_CHARS + 2  # and the two marks that say it was cut
    assert line.startswith("…") and line.endswith("…")


def test_ties_break_by_modified_then_permalink(memory: Memory, vault: Path) -> None:
    a = memory.write("Same A", observations=["[k] identical words"])
    b = memory.write("Same B", observations=["[k] identical words"])
    for note, stamp in ((a, "2026-01-01T00:00:00+00:00"), (b, "2026-02-01T00:00:00+00:00")):
        path = vault / note.path
        path.write_text(path.read_text(encoding="utf-8").replace(note.modified, stamp), encoding="utf-8")
    body_hits = memory.search("identical")
    assert body_hits[0].score == body_hits[1].score
    assert titles(body_hits) == ["Same B", "Same A"]
    assert [h.to_dict() for h in memory.search("identical")] == [h.to_dict() for h in body_hits]


def test_structural_filters(memory: Memory, vault: Path) -> None:
    memory.write(
        "Linear algebra",
        type="course",
        folder="courses",
        tags=["math", "线代"],
        fields={"credits": 4, "status": "active"},
    )
    memory.write(
        "Calculus",
        type="course",
        folder="courses/old",
        tags=["math"],
        fields={"credits": 5, "status": "done"},
    )
    memory.write("Math club", type="note", tags=["math"], fields={"status": "active"})
    assert titles(memory.search("", type="course")) == titles(memory.search("", folder="courses"))
    assert set(titles(memory.search("", type="course"))) == {"Linear algebra", "Calculus"}
    assert titles(memory.search("", folder="courses/old")) == ["Calculus"]
    assert titles(memory.search("", tags=["math", "线代"])) == ["Linear algebra"]
    assert titles(memory.search("", tags=["MATH", "#线代"])) == ["Linear algebra"]
    assert [n.title for n in memory.list(tag="#线代")] == ["Linear algebra"]
    assert set(titles(memory.search("", where={"status": "active"}))) == {"Linear algebra", "Math club"}
    assert titles(memory.search("", where={"credits": {"$gt": 4}})) == ["Calculus"]
    assert titles(memory.search("", where={"credits": {"$gte": 4, "$lt": 5}})) == ["Linear algebra"]
    assert set(titles(memory.search("", where={"status": {"$in": ["done", "active"]}}))) == {
        "Linear algebra",
        "Calculus",
        "Math club",
    }
    assert set(titles(memory.search("", where={"status": {"$ne": "active"}}))) == {"Calculus"}
    with pytest.raises(InvalidInput, match="unknown operator"):
        memory.search("", where={"credits": {"$regex": "x"}})
    with pytest.raises(InvalidInput, match="field name"):
        memory.search("", where={"bad'name": 1})


def test_field_filters_treat_blank_and_missing_fields_as_null_and_compare_like_with_like(
    memory: Memory, vault: Path
) -> None:
    (vault / "user").mkdir(parents=True, exist_ok=True)
    for name, front in {
        "blank": "status:\nconfidence: high\n",
        "open": "status: open\nconfidence: 0.9\n",
        "done": "status: done\nconfidence: [0.1, 0.95]\n",
        "bare": "",
    }.items():
        (vault / f"user/{name}.md").write_text(
            f"---\ntitle: {name}\n{front}---\n\nwidget\n", encoding="utf-8"
        )

    def where(condition: dict) -> set[str]:
        return set(titles(memory.search("", where=condition, limit=50)))

    assert where({"status": {"$ne": "done"}}) == {"blank", "open", "bare"}
    assert where({"status": None}) == {"blank", "bare"}
    assert where({"status": {"$ne": None}}) == {"open", "done"}
    assert where({"status": {"$in": ["done", None]}}) == {"done", "blank", "bare"}
    assert where({"confidence": {"$gt": 0.7}}) == {"open", "done"}  # not "high": text is no number
    assert where({"confidence": {"$lt": "m"}}) == {"blank"}
    with pytest.raises(InvalidInput, match="not null"):
        memory.search("", where={"confidence": {"$gt": None}})


def test_a_folder_filter_takes_the_folders_below_and_not_its_siblings(memory: Memory) -> None:
    memory.write("Top", folder="courses")
    memory.write("Below", folder="courses/old/2024")
    memory.write("中文 below", folder="courses/课程")
    memory.write("Sibling", folder="courses-2025")
    memory.write("Longer name", folder="coursesx")
    assert set(titles(memory.search("", folder="courses"))) == {"Top", "Below", "中文 below"}
    assert set(titles(memory.search("", folder="courses/old"))) == {"Below"}
    assert titles(memory.search("", folder="courses-2025")) == ["Sibling"]


def test_time_ranges(memory: Memory, vault: Path) -> None:
    old = memory.write("Old note", observations=["[k] timeline"])
    memory.write("New note", observations=["[k] timeline"])
    path = vault / old.path
    path.write_text(
        path.read_text(encoding="utf-8")
        .replace(old.modified, "2025-03-01T12:00:00+08:00")
        .replace(f"created: {old.created}", "created: 2025-01-01T00:00:00+08:00"),
        encoding="utf-8",
    )
    assert titles(memory.search("timeline", since="30d")) == ["New note"]
    assert titles(memory.search("timeline", until="2025-03-01")) == ["Old note"]
    assert titles(memory.search("timeline", since="2025-02-01", until="2025-03-02")) == ["Old note"]
    assert titles(memory.search("timeline", created_until="2025-06-01")) == ["Old note"]
    with pytest.raises(InvalidInput, match="ISO date"):
        memory.search("timeline", since="yesterday-ish")


def test_a_time_without_an_offset_is_in_the_vaults_zone(vault: Path, isolated_home: Path) -> None:
    (vault / "user").mkdir(parents=True)
    (vault / "cairn.toml").write_text('timezone = "+08:00"\n', encoding="utf-8")
    (vault / "user/Standup.md").write_text(
        "---\ntitle: Standup\nmodified: 2026-02-28T20:00:00\n---\n\n- [k] daily standup\n", encoding="utf-8"
    )
    with Memory.open(vault, home=isolated_home) as mem:  # 20:00 on the 28th here is 12:00 UTC
        assert titles(mem.search("standup", until="2026-02-28")) == ["Standup"]
        assert titles(mem.search("standup", since="2026-03-01")) == []
        assert titles(mem.search("standup", since="2026-02-28T19:30")) == ["Standup"]


def test_sensitive_notes_only_when_asked(memory: Memory) -> None:
    memory.write("Health", sensitivity="sensitive", observations=["[med] allergy to penicillin"])
    assert memory.search("penicillin") == []
    hits = memory.search("penicillin", include_sensitive=True)
    assert titles(hits) == ["Health"] and hits[0].sensitive


def test_related_is_one_hop_both_ways(memory: Memory) -> None:
    memory.write(
        "课表", observations=["[k] 周二"], relations=["includes [[数据结构]]", "includes [[Not yet]]"]
    )
    memory.write("数据结构", observations=["[k] 周二上午"])
    hit = next(h for h in memory.search("周二") if h.title == "课表")
    assert [(r.target, r.permalink is not None, r.direction) for r in hit.related] == [
        ("数据结构", True, "out"),
        ("Not yet", False, "out"),
    ]
    other = next(h for h in memory.search("周二") if h.title == "数据结构")
    assert [(r.target, r.direction) for r in other.related] == [("课表", "in")]


def test_a_note_linked_to_a_hit_is_found_though_it_holds_no_query_word(filled: Memory) -> None:
    filled.write(
        "事故复盘：618优惠券超发",
        type="incident",
        observations=["[fact] 优惠券超发三千张，当晚回收"],
        relations=["discovered_by [[黄嘉怡]]"],
    )
    filled.write("黄嘉怡", type="person", observations=["[role] 数据分析师，负责看板"])

    hits = filled.search("优惠券超发是谁发现的")
    assert titles(hits)[:2] == ["事故复盘：618优惠券超发", "黄嘉怡"]
    incident, person = hits[:2]
    # The person holds none of the words: all it has is a share of the note that names it.
    assert person.coverage == 0.0
    assert person.score == pytest.approx(linked_module.LINK_SHARE * incident.score)
    # Filters hold for linked notes as for any other.
    assert titles(filled.search("优惠券超发是谁发现的", type="incident")) == ["事故复盘：618优惠券超发"]


def test_a_note_linking_to_a_hit_is_found_too_and_only_if_visible(filled: Memory) -> None:
    filled.write("Thermos SKU-3301", observations=["[fact] stock is low before the sale"])
    filled.write(
        "Supplier: Hongda cups",
        observations=["[fact] ships from Yongkang"],
        relations=["supplies [[Thermos SKU-3301]]"],
    )
    filled.write(
        "Private supplier",
        sensitivity="sensitive",
        observations=["[fact] cash only"],
        relations=["supplies [[Thermos SKU-3301]]"],
    )
    # The suppliers' links name the product, not its stock.
    assert titles(filled.search("stock low")) == ["Thermos SKU-3301", "Supplier: Hongda cups"]
    shown = titles(filled.search("stock low", include_sensitive=True))
    assert shown[0] == "Thermos SKU-3301" and set(shown[1:]) == {"Supplier: Hongda cups", "Private supplier"}


def test_a_linked_hit_keeps_its_own_score_and_gains_a_share(memory: Memory) -> None:
    memory.write("Garden plan", observations=["[plan] plant tomatoes in May"], relations=["uses [[Seeds]]"])
    memory.write("Seeds", observations=["[fact] tomatoes from the market"])
    memory.write("Mulch", observations=["[fact] tomatoes from the garden"])  # as long, not linked
    score = {h.title: h.score for h in memory.search("plant tomatoes")}
    share = linked_module.LINK_SHARE
    # Seeds and Mulch score alike on their own words; the link goes both ways, so the plan's
    # score shown holds a share of Seeds' own score too.
    plan_own = score["Garden plan"] - share * score["Mulch"]
    assert score["Seeds"] == pytest.approx(score["Mulch"] + share * plan_own)
    assert score["Seeds"] > score["Mulch"]


def test_a_weak_hit_linked_from_a_strong_one_comes_in_on_both_scores(filled: Memory) -> None:
    # The compost note holds the word once in a long line: on its own it ranks below every bed,
    # and the share it gains from the plan is less than a bed's score too. Both together beat one.
    for title in ("Compost", "Compost twin"):
        filled.write(
            title, observations=["[fact] tomatoes like it, with leaves, coffee grounds, eggshells and straw"]
        )
    for bed in "ABCDEFGHIJK":
        filled.write(f"Bed {bed}", observations=[f"[fact] tomatoes in bed {bed}"])
    filled.write("Tomatoes", observations=["[plan] tomatoes"], relations=["uses [[Compost]]"])
    hits = filled.search("tomatoes")
    assert titles(hits)[:2] == ["Tomatoes", "Compost"] and "Compost twin" not in titles(hits)
    plan, compost, bed = hits[:3]  # the beds tie: the newest, then the first by permalink
    assert linked_module.LINK_SHARE * plan.score < bed.score < compost.score


def test_a_shorter_limit_shows_the_first_hits_of_a_longer_one(filled: Memory) -> None:
    # The plan ranks first only by the share it gains from its link to the compost note, which
    # ranks fifth on its own: a search cut at three must still weigh that link.
    filled.write(
        "Compost", observations=["[fact] tomatoes like it, with leaves, coffee grounds, eggshells and straw"]
    )
    for bed in "ABC":
        filled.write(f"Bed {bed}", observations=[f"[fact] tomatoes in bed {bed}"])
    filled.write(
        "Tomato plan",
        observations=["[plan] tomatoes", "[plan] more tomatoes"],
        relations=["uses [[Compost]]"],
    )
    longest = [(h.title, h.score) for h in filled.search("tomatoes", limit=10)]
    assert longest[0][0] == "Tomato plan"
    for limit in (1, 3, 8):
        assert [(h.title, h.score) for h in filled.search("tomatoes", limit=limit)] == longest[:limit]


def test_a_link_whose_type_the_query_names_passes_on_more_of_the_score(filled: Memory) -> None:
    filled.write("Dr. Aydin", type="person", observations=["[role] general practitioner"])
    filled.write("Aachen gym", type="place", observations=["[fact] open until ten"])  # first on a tie
    filled.write(
        "Physio for lower back",
        observations=["[plan] six sessions, twice a week"],
        relations=["prescribed_by [[Dr. Aydin]]", "near [[Aachen gym]]"],
    )
    hits = filled.search("who prescribed the physio")
    assert titles(hits)[:3] == ["Physio for lower back", "Dr. Aydin", "Aachen gym"]
    physio, doctor, gym = hits[:3]
    share = linked_module.LINK_SHARE
    # "near" names nothing asked: the bare share. "prescribed_by" holds one of the query's two
    # terms: the doctor gains that part of the weight too, on top of the share.
    assert gym.score == pytest.approx(share * physio.score)
    assert share * physio.score < doctor.score < physio.score


def test_line_granularity_returns_each_matching_line(filled: Memory) -> None:
    filled.write("Log", observations=["[a] kiwi one", "[b] nothing", "[c] kiwi two"])
    hits = filled.search("kiwi", granularity="line")
    assert sorted(h.line for h in hits[:2]) == [15, 17]  # the lines that say it
    assert [h.line for h in hits[2:]] == [16]  # then the line between them, by its neighbours
    assert all(h.title == "Log" for h in hits)
    top = filled.search("kiwi", granularity="line", limit=1)[0]
    assert top.snippet.splitlines() == [
        "# Log",
        "- [a] kiwi one",
        "- [b] nothing",
    ]  # the line and its neighbours


@pytest.mark.parametrize(
    ("lines", "query", "order"),
    [
        (
            [
                "[Bob] I sold my old bike last week",
                "[Alice] Which board games do you play on weekends?",
                "[Bob] Mostly chess with my brother",
            ],
            "board games weekends",
            [2, 3, 1],  # the reply comes right after the question it answers
        ),
        (
            [
                "[Bob] I sold my old bike last week",
                "[Alice] Which board games do you play on weekends? #hobby (asked in May)",
                "[Bob] Mostly chess with my brother",
            ],
            "board games weekends",
            [2, 3, 1],  # a question before its tags and context
        ),
        (
            ["[小李] 上周把旧自行车卖了", "[小王] 你周末一般玩什么桌游？", "[小李] 主要是下围棋，和我哥一起"],
            "周末 桌游",
            [2, 3, 1],
        ),
        (
            [
                "[Bob] I sold my old bike last week",
                "[Alice] I play board games on weekends.",
                "[Bob] Mostly chess with my brother",
            ],
            "board games weekends",
            [2, 1, 3],  # no question: neither neighbour gains, and the earlier line leads
        ),
    ],
)
def test_the_line_after_a_question_shares_its_score(
    memory: Memory, lines: list[str], query: str, order: list[int]
) -> None:
    note = memory.write("Chat", observations=lines)
    observations = memory.read(note.permalink).observations
    hits = memory.search(query, granularity="line")
    assert [h.line for h in hits] == [observations[i - 1].line for i in order]


def test_the_answer_share_goes_to_the_next_line_unless_it_is_a_heading() -> None:
    question = "- [Alice] Which games do you play?"
    assert ranking.blend([question, "- [Bob] chess"], [2.0, 0.0], 0.0)[1] == 2.0 * ranking.ANSWER_SHARE
    assert ranking.blend([question, "## Next week"], [2.0, 0.0], 0.0)[1] == 0.0
    assert ranking.blend(["- [Bob] chess", question], [0.0, 2.0], 0.0)[0] == 0.0  # not its answer
    # A line that asks nothing shares nothing: its neighbour's snippet shows it anyway.
    assert ranking.blend(["- [Bob] I play chess", "- [Bob] daily"], [2.0, 0.0], 0.0)[1] == 0.0


def test_a_question_is_a_line_that_ends_in_a_question_mark() -> None:
    assert ranking.asks("- [Alice] Which games do you play?")
    assert ranking.asks("- [小王] 你周末玩什么？")
    assert ranking.asks('- [Alice] She asked "where to?" (D1:3)')
    assert ranking.asks("- [q] Is the API stable? #api #v2 (from the review)")
    assert ranking.asks("## What did we decide?")
    assert ranking.asks("- [Nate] Really? (shares image: a dog) (D2:1)")
    assert ranking.asks("- [小李] 你确定吗？（问小王）")
    assert not ranking.asks("- [Nate] Cool (shares image: what is it?) (D1:6)")
    assert not ranking.asks("? #? #? #? #")  # once seconds to read, with a pattern
    assert not ranking.asks("- [Bob] Mostly chess, no idea why? Anyway, chess.")
    assert not ranking.asks("- [Bob] see the FAQ (why?) for more")
    assert not ranking.asks("- [link] https://example.com/search?q=chess")


def test_a_note_found_by_its_title_alone_still_gives_a_line_hit(filled: Memory) -> None:
    note = filled.write("Dentist", tags=["health"], observations=["[place] clinic on Main street"])
    filled.write("Diary", observations=["[day] a quiet day, then the dentist"])
    hits = filled.search("dentist", granularity="line")
    assert {h.title for h in hits} == {"Dentist", "Diary"}
    first = next(h for h in hits if h.title == "Dentist")
    lines = (filled.vault / note.path).read_text(encoding="utf-8").split("\n")
    assert lines[first.line - 1] == "- [place] clinic on Main street"  # its first content line
    assert [h.title for h in filled.search("health", granularity="line")] == ["Dentist"]  # by a tag


def test_a_pasted_page_as_a_query_finds_what_the_vault_holds(filled: Memory) -> None:
    import random
    import string

    filled.write("Crossing", observations=["[fact] the zebra crossing by the school"])
    rng = random.Random(7)
    page = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(9)) for _ in range(40_000))
    assert titles(filled.search(f"{page} zebra")) == ["Crossing"]  # 40,001 terms: once a crash
    assert titles(filled.search(f"{page} zebra crossing", granularity="line")) == ["Crossing"]
    # Of a long query, the rarest words the vault holds are searched for.
    common = " ".join(["unrelated", "entry", "number"] * 30)
    assert titles(filled.search(f"{common} {page[:2000]} zebra"))[0] == "Crossing"


def test_queries_with_nothing_to_match(filled: Memory) -> None:
    assert filled.search("？！…") == []
    assert filled.search("quixotic") == []
    assert len(filled.search("", limit=5)) == 5
    with pytest.raises(InvalidInput, match="limit"):
        filled.search("x", limit=0)


def test_long_notes_are_searchable_to_the_end(memory: Memory) -> None:
    body = "\n".join(f"line {i} filler text 填充" for i in range(5000)) + "\nthe final needle 终点"
    memory.write("Long", body=body)
    hit = memory.search("needle")[0]
    assert hit.title == "Long" and "needle" in hit.snippet
    assert memory.search("终点")[0].title == "Long"


def test_two_openings_of_one_vault_give_the_same_answer(memory: Memory, isolated_home: Path) -> None:
    for i in range(20):
        memory.write(f"Doc {i:02d}", observations=[f"[k] shared words {'alpha' if i % 2 else 'beta'}"])
    first = [h.to_dict() for h in memory.search("shared alpha", limit=20)]
    with Memory.open(memory.vault, home=isolated_home) as other:
        assert [h.to_dict() for h in other.search("shared alpha", limit=20)] == first


RED_KITE = ranking.Query(("red", "kite"), {"red": 2.0, "kite": 1.0}, frozenset({"red", "kite"}))


def test_a_line_holding_more_of_the_query_outranks_one_repeating_a_word() -> None:
    # Apart, so that neither line's neighbours hold a query word (see the next test).
    lines = [
        "red red red",
        "blue sky",
        "grey clouds",
        "a red kite flew over the long green hill near the old mill",
    ]
    repeated, none, _, both = ranking.line_bm25(lines, RED_KITE)
    assert both > repeated > none == 0.0  # plain BM25 would put the repeated word first


def test_a_line_counts_what_the_lines_beside_it_hold_of_the_query() -> None:
    # The same words twice: once right after a line naming the other query word, once among
    # lines that name nothing asked. Read with its neighbour, as a snippet shows it, the first
    # holds the whole query.
    lines = [
        "what did you see that was red?",
        "a kite over the hill",
        "blue sky",
        "grey clouds",
        "a kite over the hill",
    ]
    scores = ranking.line_bm25(lines, RED_KITE)
    assert scores[1] > scores[4] > 0.0
    assert scores[2] == scores[3] == 0.0  # a neighbour's words lift a line's score, never make one


def test_a_word_on_every_line_of_a_note_weighs_less_among_its_lines(memory: Memory) -> None:
    # "garden" is in one note only (rare across notes) but on every line of it, so among the
    # lines it tells them apart less than "party", which the note says once.
    for i in range(12):
        memory.write(f"Filler {i}", observations=[f"[misc] unrelated entry number {i}"])
    for i in range(3):
        memory.write(f"Party {i}", observations=[f"[p] party {i} planned"])
    memory.write(
        "Garden log",
        observations=[*(f"[g] garden chore number {i}" for i in range(30)), "[p] party invitation sent"],
    )
    top = memory.search("garden party", granularity="line", limit=1)[0]
    assert top.title == "Garden log" and "party invitation" in top.snippet


def test_accented_lines_rank_and_count_like_their_folded_words(memory: Memory) -> None:
    note = memory.write(
        "Ideas", observations=["[a] plain filler line", "[b] a naïve plan", "[c] another line"]
    )
    hit = memory.search("naive", granularity="line", limit=1)[0]
    assert hit.line == note.observations[1].line
    assert hit.coverage == 1.0


def test_a_noun_and_its_adjective_find_each_other(filled: Memory) -> None:
    # Porter2 gives allergy -> allergi but allergic -> allerg: neither is a prefix of the other.
    filled.write("Anna", observations=["[food] vegetarian and allergic to walnuts"])
    filled.write("Theo", observations=["[health] peanut allergy action plan"])
    filled.write("Budget", observations=["[reading] a book on behavioural economics"])
    for query, title in (("allergy", "Anna"), ("allergic", "Theo"), ("economy", "Budget")):
        found = {h.title: h.coverage for h in filled.search(query)}
        assert found.get(title) == 1.0, (query, found)


def test_a_chinese_question_is_not_weakened_by_the_seams_between_its_words(filled: Memory) -> None:
    # The notes hold 高铁, 喜欢, 朋友 and 生日 but never 铁喜 or 友生: those pairs only straddle
    # two words of the query, so a note holding all the words holds all that was asked.
    filled.write("出行偏好", observations=["[train] 坐高铁选二等座", "[seat] 喜欢靠窗"])
    filled.write("生日提醒", observations=["[friend] 朋友的生日在 3 月"])
    top = filled.search("高铁喜欢", limit=1)[0]
    assert top.title == "出行偏好" and top.coverage == 1.0
    # A word no note holds still counts against the hit: 女朋友 is not 朋友.
    top = filled.search("女朋友生日", limit=1)[0]
    assert top.title == "生日提醒" and top.coverage is not None and top.coverage < 0.9
    # A one-character word between two words (去) leaves two such pairs, 庆去 and 去大.
    filled.write("国庆假期", observations=["[trip] 国庆在大理住古城的民宿"])
    top = filled.search("国庆去大理", limit=1)[0]
    assert top.title == "国庆假期" and top.coverage == 1.0
    # A one-character word between particles lives only in the pair that joins it to the next
    # character (猫叫): the vault holds no cat, so that pair is no seam and the hit stays weak.
    filled.write("家里的网络", observations=["[wifi] 家里的 Wi-Fi 名字是 home-5G"])
    top = filled.search("家里的猫叫什么名字", limit=1)[0]
    assert top.title == "家里的网络" and top.coverage is not None and top.coverage < 0.9


def test_a_word_in_most_notes_still_finds_notes_once_the_rarer_words_run_out(memory: Memory) -> None:
    for i in range(10):
        memory.write(f"Common {i}", observations=[f"[misc] ordinary backup run {i}"])
    memory.write("Rare one", observations=["[misc] ordinary quasar sighting"])
    memory.write("Rare two", observations=["[misc] another quasar report"])
    # "ordinary" is in 11 notes of 12, so BM25 gives it no weight: the ranking query leaves it out
    # while "quasar" can fill the limit, and brings it back when it cannot.
    assert titles(memory.search("ordinary quasar", limit=2)) == ["Rare one", "Rare two"]
    hits = memory.search("ordinary quasar", limit=5)
    assert titles(hits)[:2] == ["Rare one", "Rare two"]
    assert len(hits) == 5 and all(t.startswith("Common") for t in titles(hits)[2:])
    lines = memory.search("ordinary quasar", limit=5, granularity="line")
    assert len(lines) == 5 and {h.title for h in lines} >= {"Rare one", "Rare two"}
    # The same when the common word is in a sensitive line of half the notes.
    for i in range(12):
        memory.write(f"Private {i}", observations=[f"[misc] nebula entry {i} #sensitive"])
    assert len(memory.search("nebula quasar", limit=5, include_sensitive=True)) == 5
    assert titles(memory.search("nebula quasar", limit=5)) == ["Rare one", "Rare two"]


def test_a_prefix_counts_longer_words_only_where_its_own_is_missing() -> None:
    # A CJK character is held through every pair it starts, its own count or not.
    query = ranking.Query.build(["data", "猫"], 100, {}, frozenset({"data", "猫"}))
    texts = ["Database and datasets", "data in a database", "猫咪 和 猫粮", "nothing here"]
    counted = ranking.term_counts(texts, query)
    assert [c.tf if c else None for c in counted] == [{"data": 2}, {"data": 1}, {"猫": 2}, None]
    assert [c.length if c else None for c in counted[:3]] == [3, 4, 5]


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=40), max_size=8))
def test_lines_are_counted_the_same_folded_together_or_alone(texts: list[str]) -> None:
    terms = ["naive", "cafe", "数据", "ss", "i"]
    query = ranking.Query.build(terms, 100, {}, frozenset())
    assert ranking.term_counts(texts, query) == [ranking.term_counts([t], query)[0] for t in texts]


def test_ranking_the_matches_in_two_halves_gives_what_one_query_gives(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.search import candidates

    words = ["harbor", "lantern", "harbor lantern", "harbor harbor", "港口", "灯塔 harbor"]
    for i in range(90):
        body = [f"[log] {words[i % len(words)]} entry {i % 7}", "[log] unrelated filler text here"]
        memory.write(f"Note {i:02d}", observations=body[: 1 + i % 2], tags=["港口"] if i % 5 == 0 else [])
    for i in range(0, 90, 9):  # holes in the ids, and the middle id off centre
        memory.delete(f"Note {i:02d}")
    queries = ["harbor", "harbor lantern", "港口 harbor", "entry", "lantern filler"]

    def answers() -> list[list[tuple[str, float, int]]]:
        return [
            [(h.title, h.score, h.line) for h in memory.search(q, limit=limit, granularity=g)]
            for q in queries
            for limit in (1, 10, 40)
            for g in ("note", "line")
        ]

    monkeypatch.setattr(candidates, "SPLIT_AFTER", 10**9)
    whole = answers()
    assert memory._index._second is None  # nothing was split
    monkeypatch.setattr(candidates, "SPLIT_AFTER", 0)
    monkeypatch.setattr(candidates, "_CORES", 2)
    assert answers() == whole
    assert memory._index._second is not None  # the halves were ranked on two connections


def test_aliases_in_front_matter_are_searched_like_the_title(memory: Memory) -> None:
    (memory.vault / "user").mkdir(parents=True, exist_ok=True)
    (memory.vault / "user" / "Robert Chen.md").write_text(
        "---\ntitle: Robert Chen\naliases: [Bob, 陈工]\n---\n\n- [role] leads the platform team\n",
        encoding="utf-8",
    )
    (memory.vault / "user" / "One alias.md").write_text(
        "---\ntitle: One alias\naliases: Quokka\n---\n\n- [note] a single alias as a string\n",
        encoding="utf-8",
    )
    memory.write("Lunch", observations=["[fact] Bob mentioned lunch once"])  # "bob" in a body only
    # The alias weighs as a title: above the note that holds the word in its body.
    assert [h.title for h in memory.search("bob")][:2] == ["Robert Chen", "Lunch"]
    assert [h.title for h in memory.search("陈工")] == ["Robert Chen"]
    assert [h.title for h in memory.search("quokka")] == ["One alias"]
    # An edit of the aliases by hand is seen, and the old alias is forgotten.
    path = memory.vault / "user" / "Robert Chen.md"
    path.write_text(path.read_text(encoding="utf-8").replace("[Bob, 陈工]", "[Rob]"), encoding="utf-8")
    assert [h.title for h in memory.search("bob")] == ["Lunch"]
    assert [h.title for h in memory.search("rob")] == ["Robert Chen"]
    # Items that are not names, in a stranger's file, are passed over (a number is a name).
    (memory.vault / "user" / "Odd.md").write_text(
        "---\ntitle: Odd\naliases: [{a: 1}, [x], true, 2024-01-02, 42, '']\n---\n\nbody\n", encoding="utf-8"
    )
    assert [h.title for h in memory.search("42")] == ["Odd"]
    assert [h.title for h in memory.search("2024-01-02")] == ["Odd"]


def test_an_inline_tag_in_the_body_counts_as_a_tag(memory: Memory) -> None:
    (memory.vault / "user").mkdir(parents=True, exist_ok=True)
    (memory.vault / "user" / "Standup.md").write_text(
        "---\ntitle: Standup\ntags: [Team]\n---\n\n"
        "# Heading is not a tag\n"
        "Discussed the rollout #project/atlas and #工作, also #team again.\n"
        "- [fact] issue #123 is fixed\n"
        "See https://example.com/page#anchor and [a link](#section) and [[Other#Part]].\n"
        "Inline `#notatag` code.\n"
        "```\n#alsonot in a fence\n```\n"
        "- [secret] pin 4321 #sensitive #bank\n",
        encoding="utf-8",
    )
    memory.write("Unrelated", observations=["[fact] atlas of the world"])
    hit = memory.search("standup")[0]
    assert hit.tags == ("Team", "project/atlas", "工作")
    assert [h.title for h in memory.search("", tags=["project/atlas"])] == ["Standup"]
    assert [h.title for h in memory.search("", tags=["#工作"])] == ["Standup"]
    assert [n.title for n in memory.list(tag="工作")] == ["Standup"]
    for not_tags in ("123", "anchor", "section", "Part", "notatag", "alsonot", "bank", "sensitive"):
        assert memory.search("", tags=[not_tags]) == [], not_tags
    # Found by the tag as by any tag: the tags column weighs more than a body.
    assert memory.search("工作")[0].title == "Standup"


def test_an_emoji_in_a_title_can_be_searched(memory: Memory) -> None:
    memory.write("🚀 Launch plan", observations=["[step] book the venue"])
    memory.write("Launch retrospective", observations=["[fact] the launch went well"])
    memory.write("Garden ❤️ notes", observations=["[fact] roses"])
    assert [h.title for h in memory.search("🚀")] == ["🚀 Launch plan"]
    assert [h.title for h in memory.search("❤")] == ["Garden ❤️ notes"]  # with or without U+FE0F
    assert [h.title for h in memory.search("❤️")] == ["Garden ❤️ notes"]
    assert memory.search("🚀 launch")[0].title == "🚀 Launch plan"
    assert memory.search("🎉") == []
