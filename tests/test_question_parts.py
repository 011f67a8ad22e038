"""A question that asks two things (issue 37 item 3): cut at its own seams, each part ranked on its
own, the hits taken in turn, so the short answer to one part is not buried under the other's."""

from __future__ import annotations

import pytest

from cairn import Memory
from cairn.search.parts import question_parts


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (
            "我手里拿的这款手机是啥来着？另外，购物节的主要内容是什么？",
            ["我手里拿的这款手机是啥来着？", "购物节的主要内容是什么？"],
        ),
        ("小李推荐了什么？还有，我的猫怎么了？", ["小李推荐了什么？", "我的猫怎么了？"]),
        ("我的手机以及上司的名字是什么？", ["我的手机", "上司的名字是什么？"]),
        (
            "What phone do I have? And also, what did I eat with Mia?",
            ["What phone do I have?", "what did I eat with Mia?"],
        ),
        ("Is it raining? Also, what is the date?", ["Is it raining?", "what is the date?"]),
        # A statement is context for the question after it, not a thing asked.
        ("我下周要出差。我上司叫什么来着？", ["我下周要出差。我上司叫什么来着？"]),
        # Coordination inside one question, and 还有 as a verb, ask one thing.
        ("What did Caroline and Melanie do?", ["What did Caroline and Melanie do?"]),
        ("我还有几天假？", ["我还有几天假？"]),
        # A part made of question words alone asks nothing of its own.
        ("Where did I park? Why?", ["Where did I park? Why?"]),
        ("还有什么？", ["还有什么？"]),
    ],
)
def test_a_question_is_cut_where_it_asks_another_thing(query: str, parts: list[str]) -> None:
    assert question_parts(query) == parts


def _two_topics(memory: Memory) -> None:
    # Phones come up everywhere; the festival in one note, line after line.
    for i in range(12):
        memory.write(f"2026-02-{i + 1:02d}", observations=[f"[店] 看了第{i}款手机壳和手机膜"])
    memory.write("2026-03-01", observations=["[家] 我的手机型号是苹果iPhone13。", "[家] 今天下雨了"])
    memory.write(
        "2026-03-02",
        observations=[f"[公司] 购物节的主要内容第{i}条：满减、抽奖和直播" for i in range(1, 7)],
    )


def _line(memory: Memory, hit) -> str:
    return (memory.vault / hit.path).read_text(encoding="utf-8").splitlines()[hit.line - 1]


def test_each_part_of_a_two_part_question_has_its_answer_near_the_top(memory: Memory) -> None:
    _two_topics(memory)
    query = "我的手机是什么型号？另外，购物节的主要内容是什么？"
    first_two = [_line(memory, h) for h in memory.search(query, granularity="line", limit=5)[:2]]
    assert any("iPhone13" in line for line in first_two), first_two
    assert any("购物节" in line for line in first_two), first_two
    # Asked whole, the many lines about the shopping festival fill the first five.
    whole = [
        _line(memory, h)
        for h in memory.search("我的手机是什么型号，购物节的主要内容是什么？", granularity="line", limit=5)
    ]
    assert not any("iPhone13" in line for line in whole), whole


def test_a_hit_two_parts_find_is_shown_once(memory: Memory) -> None:
    memory.write("Phone", observations=["[me] My phone is a Pixel 8 and my laptop is a ThinkPad."])
    hits = memory.search("What phone do I have? And also, what laptop do I use?", granularity="line")
    assert [h.title for h in hits] == ["Phone"]
