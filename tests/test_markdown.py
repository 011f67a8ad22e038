from __future__ import annotations

import json
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn import markdown
from cairn.errors import DamagedNote, InvalidInput
from cairn.markdown import (
    append_to_section,
    format_observation,
    format_relation,
    inline_links,
    new_note,
    parse,
    parse_observation,
    parse_observation_spec,
    parse_relation,
    parse_relation_spec,
    set_fields,
)
from cairn.models import Observation, Relation
from cairn.observation_line import category_of

SAMPLE = """---
title: 数据结构（2026 秋）
type: course   # note | course | task
permalink: ds-course-2026f-a3f2
tags: [课程, 大二上]
created: 2026-09-20T10:00:00+08:00
list:
- a
- b

# the next field is free text
desc: |
  hello
  world

custom_field: 'kept as is'   # comments are kept too
---

# 数据结构（2026 秋）

## Observations
- [teacher] 邓俊辉 #重要 (讲得快，坐前排)
- [deadline] 大作业 12 月第 2 周截止
- [ ] not an observation, see [[Foo|alias]] and [[Bar#part]]

```
- [code] not parsed
- rel [[NotALink]]
```

## Relations
- belongs_to [[我的课表 2026 秋]]
- "depends on" [[线性代数（2026 秋）]] (先修)
- mentions [[Foo]]
"""

# Per test, not a global profile: this module must not change other modules' hypothesis settings.
grammar_settings = settings(max_examples=200, deadline=None)
note_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fm_lines(text: str) -> list[str]:
    lines = text.lstrip("\ufeff").split("\n")
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    return [line + "\n" for line in lines[1:close]]


def _without_key(lines: list[str], key: str) -> list[str]:
    """Drop ``key``'s line and its continuation lines (generated keys are ``[a-z][a-z0-9_]*``)."""
    out, skipping = [], False
    for line in lines:
        if re.match(r"[a-z][a-z0-9_]*:", line):
            skipping = line.startswith(f"{key}:")
        if not skipping:
            out.append(line)
    return out


# --- parse -----------------------------------------------------------------------------------


def test_parse_sample():
    doc = parse(SAMPLE)
    assert doc.has_frontmatter
    assert list(doc.frontmatter) == [
        "title",
        "type",
        "permalink",
        "tags",
        "created",
        "list",
        "desc",
        "custom_field",
    ]
    assert doc.frontmatter["created"] == "2026-09-20T10:00:00+08:00"
    assert doc.frontmatter["tags"] == ["课程", "大二上"]
    assert doc.frontmatter["desc"] == "hello\nworld\n"
    assert doc.title_heading == "数据结构（2026 秋）"
    assert doc.body_start_line == 18
    assert doc.body.startswith("\n# 数据结构")
    assert doc.observations == (
        Observation("teacher", "邓俊辉", ("重要",), "讲得快，坐前排", line=22),
        Observation("deadline", "大作业 12 月第 2 周截止", (), None, line=23),
    )
    assert doc.relations == (
        Relation("belongs_to", "我的课表 2026 秋", None, line=32),
        Relation("depends on", "线性代数（2026 秋）", "先修", line=33),
        Relation("mentions", "Foo", None, line=34),
        Relation("links_to", "Foo", line=24, inline=True),
        Relation("links_to", "Bar", line=24, inline=True),
    )


def test_parse_crlf_bom_and_no_frontmatter():
    text = "\ufeff" + SAMPLE.replace("\n", "\r\n")
    doc = parse(text)
    assert doc.text == text
    assert doc.frontmatter == parse(SAMPLE).frontmatter
    assert doc.observations == parse(SAMPLE).observations
    assert doc.relations == parse(SAMPLE).relations
    plain = parse("just text\n- [a] b [[X]]\n")
    assert (plain.has_frontmatter, plain.frontmatter, plain.body_start_line) == (False, {}, 1)
    assert plain.observations[0].line == 2 and plain.relations[0].target == "X"


def test_dates_stay_strings_and_empty_frontmatter():
    assert parse("---\nd: 2026-09-20\nt: 2026-09-20 10:00:00\n---\n").frontmatter == {
        "d": "2026-09-20",
        "t": "2026-09-20 10:00:00",
    }
    assert parse("---\n---\nbody").frontmatter == {}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\ntitle: x\nbody without fence\n", "never closed"),
        ("---\ntitle: [unclosed\n---\n", "line"),
        ("---\n- a\n- b\n---\n", "list"),
        ("---\njust a string\n---\n", "str"),
        ("---\na: 1\n  b: 2\n---\n", "not valid YAML"),
    ],
)
def test_damaged(text, fragment):
    with pytest.raises(DamagedNote) as info:
        parse(text)
    assert fragment in info.value.message
    with pytest.raises(DamagedNote):
        set_fields(text, {"modified": "x"})


def test_yaml_error_names_the_file_line():
    with pytest.raises(DamagedNote, match="line 3"):
        parse("---\ntitle: ok\nbad: [unclosed\n---\n")


# --- observation / relation grammar ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- [fact] text", Observation("fact", "text")),
        ("  * [多 词 类别]   some   text  ", Observation("多 词 类别", "some text")),
        (
            "- [lang] C# and a.html#x are not tags #real",
            Observation("lang", "C# and a.html#x are not tags", ("real",)),
        ),
        ("- [t] #a text #b #a", Observation("t", "#a text", ("a", "b"))),  # tags read where they stand
        ("- [fact] issue #123 is fixed", Observation("fact", "issue #123 is fixed", ("123",))),
        ("- [t] notify #ops channel #x", Observation("t", "notify #ops channel", ("ops", "x"))),
        ("- [t] call f(x)", Observation("t", "call f(x)")),
        ("- [t] text (outer (inner) ctx)", Observation("t", "text", (), "outer (inner) ctx")),
        ("- [t] text （全角） (ctx)", Observation("t", "text （全角）", (), "ctx")),
        ("- [t] see [[Note]] #x", Observation("t", "see [[Note]]", ("x",))),
        ("- [ ] todo", None),
        ("- [x] done", None),
        ("- [X] done", None),
        ("- [text](http://example.com)", None),
        ("- [[Wiki]]", None),
        ("- [[Wiki]] with text", None),
        ("- []  empty category", None),
        ("- [cat]", None),
        ("- [cat] #only #tags", None),
        ("- [cat] (only context)", None),
        ("-[cat] no space", None),
        ("[cat] no bullet", None),
        ("+ [cat] plus bullet", None),
    ],
)
def test_observation_table(line, expected):
    assert parse_observation(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- belongs_to [[X]]", Relation("belongs_to", "X")),
        ('* "depends on" [[线性代数|LA]] (先修)', Relation("depends on", "线性代数", "先修")),
        ("- part_of [[Book#Chapter 1]]  ", Relation("part_of", "Book")),
        ("- [cat] [[X]]", None),
        ("- see [[X]] and more", None),
        ("- [[X]]", None),
        ("- #tag [[X]]", None),
        ('- "" [[X]]', None),
        ("- rel [[X]] (a) (b)", None),
        ("- rel [[#heading]]", None),
    ],
)
def test_relation_table(line, expected):
    assert parse_relation(line) == expected


def test_format_relation_quotes_multiword_types():
    assert format_relation("depends on", "X", "先修") == '"depends on" [[X]] (先修)'
    assert format_relation("belongs_to", "我的课表") == "belongs_to [[我的课表]]"
    assert parse_relation("- " + format_relation("#odd", "X")) == Relation("#odd", "X")
    for bad_type, bad_target in [("", "X"), ('a"b', "X"), ("t", "a|b"), ("t", "C# notes"), ("t", "")]:
        with pytest.raises(InvalidInput):
            format_relation(bad_type, bad_target)


def test_specs():
    assert parse_observation_spec("[fact] 喜欢 Python #lang (2026)") == Observation(
        "fact", "喜欢 Python", ("lang",), "2026"
    )
    assert parse_observation_spec("  - [fact] x ") == Observation("fact", "x")
    assert parse_relation_spec('"depends on" [[X]]') == Relation("depends on", "X")
    assert parse_relation_spec("- rel [[X]] (c)") == Relation("rel", "X", "c")
    for bad, why in [
        ("no category", "category"),
        ("[] empty", "category"),
        ("[ ] checkbox", "category"),
        ("[fact]   ", "text"),
        ("[fact] #onlytag", "text"),
        ("[fact] a\nb", "single line"),
    ]:
        with pytest.raises(InvalidInput, match=why):
            parse_observation_spec(bad)
    for bad in ["rel X", "[[X]]", "rel [[X]] extra", "rel [[X]]\n(c)"]:
        with pytest.raises(InvalidInput):
            parse_relation_spec(bad)


def test_inline_links():
    text = "a [[X]] b [[Y|alias]] [[X#h]] [[Z#]]\n```\n[[Hidden]]\n```\n[[W]]"
    assert inline_links(text) == ["X", "Y", "Z", "W"]


# Sampled alphabets keep generation fast; they still mix CJK, full-width punctuation, emoji and
# the characters the grammar treats specially (but never #, ( ), [ ] or whitespace inside words).
WORD_ALPHABET = "abcXYZ019_-.:/|!?&*+=<>@$%^~`;'\"数据结构课程秋重要讲得快，（）。é🙂"
words = st.text(st.sampled_from(WORD_ALPHABET), min_size=1, max_size=8)
phrase = st.lists(words, min_size=1, max_size=5).map(" ".join)
tags = st.lists(words, max_size=4, unique=True)
categories = phrase.filter(lambda c: c not in ("x", "X"))


@grammar_settings
@given(categories, phrase, tags, st.none() | phrase)
def test_observation_round_trip(category, content, tag_list, context):
    line = "- " + format_observation(category, content, tag_list, context)
    assert parse_observation(line) == Observation(category, content, tuple(tag_list), context)
    assert parse_relation(line) is None


relation_types = st.text(st.sampled_from(WORD_ALPHABET.replace('"', "") + " #'\t"), min_size=1, max_size=10)
relation_types = relation_types.map(str.strip).filter(bool)
targets = st.text(st.sampled_from(WORD_ALPHABET.replace("|", "") + " "), min_size=1, max_size=10)
targets = targets.map(str.strip).filter(bool)


@grammar_settings
@given(relation_types, targets, st.none() | phrase)
def test_relation_round_trip(rel_type, target, context):
    line = "- " + format_relation(rel_type, target, context)
    assert parse_relation(line) == Relation(rel_type, target, context)
    assert parse_observation(line) is None


# --- set_fields --------------------------------------------------------------------------------


def test_set_fields_surgical_on_sample():
    out = set_fields(
        SAMPLE,
        {"type": "note", "list": ["x"], "desc": "new", "modified": "2026-10-09T12:00:00+08:00"},
        remove=["tags", "missing"],
    )
    assert _fm_lines(out) == [
        "title: 数据结构（2026 秋）\n",
        "type: note   # note | course | task\n",
        "permalink: ds-course-2026f-a3f2\n",
        "created: 2026-09-20T10:00:00+08:00\n",
        "list: [x]\n",
        "\n",
        "# the next field is free text\n",
        "desc: new\n",
        "\n",
        "custom_field: 'kept as is'   # comments are kept too\n",
        "modified: 2026-10-09T12:00:00+08:00\n",
    ]
    assert parse(out).body == parse(SAMPLE).body
    assert set_fields(SAMPLE, {}) == SAMPLE
    assert set_fields(SAMPLE, {}, remove=["missing"]) == SAMPLE


def test_set_fields_keeps_comment_of_one_line_value():
    text = "---\ntitle: 数据结构（秋）  # 标题 comment\ntags: [a]   # t\n---\n"
    assert set_fields(text, {"title": "新", "tags": ["课程", "b"]}) == (
        "---\ntitle: 新  # 标题 comment\ntags: [课程, b]   # t\n---\n"
    )
    assert (
        set_fields(text, {"tags": {"k": "v"}})
        == "---\ntitle: 数据结构（秋）  # 标题 comment\ntags:\n  k: v\n---\n"
    )


def test_set_fields_leaves_unchanged_values_as_written():
    text = '---\ntitle: "T"  # c\ntags:\n- a\nn: 1\n---\n'
    assert set_fields(text, {"title": "T", "tags": ["a"], "n": 1}) == text
    assert set_fields(text, {"n": True}) == '---\ntitle: "T"  # c\ntags:\n- a\nn: true\n---\n'


def test_set_fields_without_frontmatter_and_crlf():
    assert set_fields("# T\r\nbody", {"title": "T"}) == "---\r\ntitle: T\r\n---\r\n# T\r\nbody"
    assert set_fields("", {"a": [1, 2]}) == "---\na: [1, 2]\n---\n"
    assert set_fields("\ufeff# T\n", {"a": 1}) == "\ufeff---\na: 1\n---\n# T\n"
    crlf = "---\r\na: 1\r\nb: 2\r\n---\r\nbody"
    assert (
        set_fields(crlf, {"a": {"k": [1]}, "c": "x"})
        == "---\r\na:\r\n  k: [1]\r\nb: 2\r\nc: x\r\n---\r\nbody"
    )


def test_set_fields_flow_frontmatter_and_duplicates():
    assert set_fields("---\n{a: 1, b: 2}\n---\nbody\n", {"b": 3}) == "---\na: 1\nb: 3\n---\nbody\n"
    assert set_fields("---\na: 1\nb: 2\na: 3\n---\n", {"a": 4}) == "---\na: 4\nb: 2\n---\n"


def test_set_fields_multiline_strings_stay_editable():
    text = set_fields("---\nt: x\n---\n", {"s": "kept\n\n\n"})
    assert text == "---\nt: x\ns: |+\n  kept\n\n\n---\n"
    text = set_fields(text, {"after": 1})
    assert parse(text).frontmatter == {"t": "x", "s": "kept\n\n\n", "after": 1}
    assert set_fields(text, {"s": "a\nb"}) == "---\nt: x\ns: |-\n  a\n  b\n\n\nafter: 1\n---\n"


def test_set_fields_rejects_unwritable_values():
    with pytest.raises(InvalidInput):
        set_fields("---\na: 1\n---\n", {"a": object()})


yaml_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(
        [
            "yes",
            "no",
            "null",
            "~",
            "2026-09-20T10:00:00+08:00",
            "2026-09-20",
            "- x",
            "a: b",
            "#c",
            "---",
            "'q'",
            "1e3",
        ]
    )
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@st.composite
def notes(draw):
    """Hand-written-looking notes: known and unknown fields in random order and quoting styles."""
    title = draw(
        st.text(st.sampled_from("数据结构课表秋abcXYZ 0123-_（）"), min_size=1, max_size=15)
        .map(str.strip)
        .filter(bool)
    )
    fields = {
        "title": title,
        "permalink": "p-a3f2",
        "tags": draw(st.lists(words, max_size=3)),
        "created": "2026-09-20T10:00:00+08:00",
    }
    fields |= draw(st.dictionaries(keys.filter(lambda k: k not in fields), yaml_scalars, max_size=4))
    if draw(st.booleans()):
        fields["modified"] = "2026-09-21T08:00:00+08:00"
    items = draw(st.permutations(list(fields.items())))
    lines = []
    for key, value in items:
        style = draw(st.sampled_from(["dump", "json", "comment"]))
        if style == "json" and isinstance(value, str) and value.isprintable():
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        else:
            block = set_fields("", {key: value}).split("\n")[1:-2]
            lines += block[:-1] + [
                block[-1] + ("  # 备注 note" if style == "comment" and len(block) == 1 else "")
            ]
    obs = draw(st.lists(st.tuples(categories, phrase, tags), max_size=3))
    body = "\n".join(f"- {format_observation(c, t, tg)}" for c, t, tg in obs)
    text = (
        "---\n"
        + "\n".join(lines)
        + f"\n---\n\n# {title}\n\n## Observations\n{body}\n\n## Relations\n- rel [[Target]]\n"
    )
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text, dict(items)


@note_settings
@given(notes(), yaml_values)
def test_set_fields_touches_only_its_key(note, value):
    text, fields = note
    assert parse(text).frontmatter == fields
    assert set_fields(text, {}) == text
    out = set_fields(text, {"modified": value})
    assert parse(out).frontmatter == fields | {"modified": value}
    assert parse(out).body == parse(text).body
    assert _without_key(_fm_lines(out), "modified") == _without_key(_fm_lines(text), "modified")
    assert set_fields(out, {}, remove=["modified"]) == set_fields(text, {}, remove=["modified"])
    if "\r\n" in text:
        assert "\n" not in out.replace("\r\n", "")


@note_settings
@given(notes(), keys, yaml_values)
def test_set_fields_round_trips_any_value(note, key, value):
    text, fields = note
    out = set_fields(text, {key: value})
    assert parse(out).frontmatter[key] == value
    again = parse(set_fields(out, {"zz_after": [key]})).frontmatter
    assert (again[key], again["zz_after"]) == (value, [key])


@note_settings
@given(
    st.dictionaries(keys, yaml_values, max_size=5),
    st.text(st.sampled_from("数据结构abc XYZ#[]"), min_size=1, max_size=12).map(str.strip).filter(bool),
    st.lists(st.tuples(categories, phrase, tags, st.none() | phrase), max_size=3),
    st.lists(st.tuples(relation_types, targets, st.none() | phrase), max_size=3),
)
def test_new_note_parses_back(fields, title, obs, rels):
    text = new_note(
        fields,
        title,
        "Some body text.\n",
        [format_observation(*o) for o in obs],
        [format_relation(*r) for r in rels],
    )
    assert text.endswith("\n") and not text.endswith("\n\n")
    doc = parse(text)
    assert doc.frontmatter == fields
    assert doc.title_heading == title
    assert [(o.category, o.content, o.tags, o.context) for o in doc.observations] == [
        (c, t, tuple(tg), ctx) for c, t, tg, ctx in obs
    ]
    explicit = [r for r in doc.relations if not r.inline]
    assert [(r.type, r.target, r.context) for r in explicit] == rels


def test_new_note_layout():
    assert new_note({"title": "T"}, "T") == "---\ntitle: T\n---\n\n# T\n"
    assert new_note({}, "T", "\n\nbody\n\n", ["[a] b"], ["r [[X]]"]) == (
        "---\n---\n\n# T\n\nbody\n\n## Observations\n- [a] b\n\n## Relations\n- r [[X]]\n"
    )
    with pytest.raises(InvalidInput):
        new_note({}, "two\nlines")
    with pytest.raises(InvalidInput):
        new_note({}, " ")


def test_front_matter_keeps_emoji_and_astral_characters_as_written():
    """People edit these files: a character beyond the BMP is written as itself, never as a
    ``\\U0001F389`` escape (libyaml's emitter escapes them, so it is not used for writing)."""
    text = new_note({"title": "会议 🎉 party", "tags": ["😀", "𠀀字"]}, "会议 🎉 party")
    assert text.startswith("---\ntitle: 会议 🎉 party\ntags: [😀, 𠀀字]\n---\n")
    assert parse(text).frontmatter == {"title": "会议 🎉 party", "tags": ["😀", "𠀀字"]}


# Values front matter holds, with every character PyYAML's emitter treats specially at the start,
# inside, or at the end of a plain scalar, and the words YAML reads as something else.
YAML_ALPHABET = "abcXYZ019 数据é😀-.:#_/()+=~!?,[]{}&*|>%@`'\"\t\u00a0\u3000\U0010ffff\ufeff\x85"
yaml_words = st.text(st.sampled_from(YAML_ALPHABET), min_size=0, max_size=10) | st.sampled_from(
    [
        "yes",
        "No",
        "null",
        "~",
        "1.5",
        "0x1f",
        "1_000",
        ".inf",
        "1:20",
        "2026-01-01T09:00:00+08:00",
        "...x",
        "---x",
        "<<",
        "=",
    ]
)
yaml_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,6}", fullmatch=True) | st.sampled_from(
    ["yes", "null", "on", "y"]
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(yaml_keys, yaml_words | st.lists(yaml_words, max_size=3), min_size=1, max_size=2))
def test_front_matter_written_without_the_emitter_is_what_pyyaml_writes(fields):
    """The fast writer of plain front matter gives PyYAML's own bytes, or leaves the value to it."""
    fast = markdown._simple_dump(fields)
    dumped = yaml.dump(
        fields,
        Dumper=markdown._Dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1 << 30,
    )
    if fast is not None:
        assert fast == dumped.split("\n")[:-1]
    assert parse(new_note(fields, "T")).frontmatter == {
        k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()
    }


def test_plain_front_matter_takes_the_fast_writer():
    fields = {"title": "数据结构 notes", "tags": ["课程", "cs-101"], "created": "2026-12-01T04:38:23+00:00"}
    assert markdown._simple_dump(fields) == [
        "title: 数据结构 notes",
        "tags: [课程, cs-101]",
        "created: 2026-12-01T04:38:23+00:00",
    ]
    for tricky in (
        {"title": "yes"},
        {"title": "a: b"},
        {"title": "...x"},
        {"tags": ["a,b"]},
        {"n": 1},
        {"yes": "x"},
    ):
        assert markdown._simple_dump(tricky) is None


# --- append_to_section -------------------------------------------------------------------------


def test_append_to_existing_section():
    out = append_to_section(SAMPLE, "Relations", "cites [[Y]]")
    assert out == SAMPLE + "- cites [[Y]]\n"
    out = append_to_section(SAMPLE, "observations", "[new] item")
    assert out.replace("- [new] item\n", "", 1) == SAMPLE
    assert "```\n- [new] item\n\n## Relations" in out
    assert parse(out).observations[-1].content == "item"


def test_append_between_sections_keeps_blank_lines():
    text = "# T\n\n## Observations\n- [a] b\n\n\n## Relations\n- r [[X]]\n"
    assert append_to_section(text, "Observations", "[c] d") == (
        "# T\n\n## Observations\n- [a] b\n- [c] d\n\n\n## Relations\n- r [[X]]\n"
    )
    assert append_to_section("## Observations\n### Sub\n- x\n# Top\n", "Observations", "[c] d") == (
        "## Observations\n### Sub\n- x\n- [c] d\n# Top\n"
    )


def test_append_creates_section_and_handles_endings():
    assert append_to_section("# T\nbody", "Relations", "r [[X]]") == "# T\nbody\n\n## Relations\n- r [[X]]\n"
    assert append_to_section("# T\n\n", "Relations", "r [[X]]") == "# T\n\n## Relations\n- r [[X]]\n"
    assert append_to_section("", "Relations", "r [[X]]") == "## Relations\n- r [[X]]\n"
    crlf = "---\r\na: 1\r\n---\r\n## Observations\r\n- [a] b"
    assert append_to_section(crlf, "Observations", "[c] d") == crlf + "\r\n- [c] d\r\n"
    assert (
        append_to_section("\ufeff# T\r\n", "Relations", "r [[X]]")
        == "\ufeff# T\r\n\r\n## Relations\r\n- r [[X]]\r\n"
    )
    fenced = "```\n## Observations\n```\n"
    assert append_to_section(fenced, "Observations", "[a] b") == fenced + "\n## Observations\n- [a] b\n"
    with pytest.raises(InvalidInput):
        append_to_section("x", "Observations", "a\nb")


@note_settings
@given(notes(), categories, phrase)
def test_append_keeps_other_bytes(note, category, content):
    text, _ = note
    item = format_observation(category, content)
    out = append_to_section(text, "Observations", item)
    nl = "\r\n" if "\r\n" in text else "\n"
    added = f"- {item}{nl}"
    at = out.rindex(added)  # ours is the section's last item; the same text may appear above it
    assert (out[:at] + out[at + len(added) :]).rstrip("\r\n") == text.rstrip("\r\n")
    assert parse(out).observations[-1].content == content


# Any text a value may hold, tabs included (YAML reads a tab as white space: "a\t# x" ends at
# the comment, "10:\t30" is an error), and ":" in list items, which YAML's flow context treats apart.
_VALUE_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"], include_characters="\t:#")


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_-]{0,8}", fullmatch=True),
        st.one_of(
            st.text(_VALUE_CHARS, min_size=1, max_size=20),
            st.lists(st.text(_VALUE_CHARS, min_size=1, max_size=8), max_size=4),
            st.sampled_from(
                [
                    "yes",
                    "no",
                    "null",
                    "~",
                    "1",
                    "-2",
                    "0x1f",
                    "1.5e3",
                    ".inf",
                    "2026-11-30",
                    "a: b",
                    "x #c",
                    "sensitive\t# private",
                    "10:\t30",
                    "[a:?]",
                    "[x:y]",
                ]
            ),
        ),
        max_size=6,
    )
)
def test_fast_front_matter_reads_exactly_what_yaml_reads(entries: dict) -> None:
    lines = []
    for key, value in entries.items():
        shown = "[" + ", ".join(value) + "]" if isinstance(value, list) else value
        lines.append(f"{key}: {shown}")
    source = "\n".join(lines) + "\n"
    from cairn.markdown import _Loader, _simple_frontmatter

    fast = _simple_frontmatter(source)
    if fast is None:
        return  # not simple: YAML reads it
    try:
        slow = yaml.load(source, Loader=_Loader) or {}
    except yaml.YAMLError:
        raise AssertionError(f"fast path accepted text YAML rejects: {source!r}") from None
    assert fast == slow


@pytest.mark.parametrize(
    "front",
    [
        "title: Trip\nmodified: &day 2026-04-01\nreviewed: *day\n",  # the anchor is on a replaced line
        "title: Trip\norigin: &o laptop\nauthor: *o\n",
        "title: Trip\nz: 3\n...\n",  # YAML's end-of-document marker before the new key
    ],
)
def test_set_fields_never_writes_front_matter_that_does_not_read_back(front: str) -> None:
    text = f"---\n{front}---\n\n- [plan] fly to Lisbon\n"
    before = parse(text).frontmatter
    out = set_fields(text, {"modified": "2026-05-05", "origin": "desk"})
    assert parse(out).frontmatter == before | {"modified": "2026-05-05", "origin": "desk"}
    assert out.endswith("---\n\n- [plan] fly to Lisbon\n")


def test_lines_ending_in_a_lone_cr_are_damaged_not_one_long_line() -> None:
    with pytest.raises(DamagedNote, match="lone CR"):
        parse("---\rtitle: Old Mac\rsensitivity: sensitive\r---\r\r- [pin] 4477 #sensitive\r")
    assert parse("one line ending in CR\r").body == "one line ending in CR\r"  # no second line to hide


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("- [Melanie] ran a charity race (D2:1)", "Melanie"),
        ("  * [决策] 用 SQLite", "决策"),
        ("- [x] a done checkbox", None),
        ("- [ ] an open checkbox", None),
        ("- [link](https://example.org)", None),
        ("[fact] not a list item", None),
    ],
)
def test_a_category_read_alone_agrees_with_the_parser(line: str, category: str | None) -> None:
    assert category_of(line) == category  # what search weighs lines by
    parsed = parse_observation(line)
    assert (parsed.category if parsed else None) == category
