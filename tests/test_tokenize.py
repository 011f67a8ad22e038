import re

import apsw
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cairn import tokenize
from cairn.tokenize import (
    acronym_singulars,
    cjk_pairs,
    compounds,
    fold,
    index_text,
    is_cjk,
    letter_digit_parts,
    query_compounds,
    query_terms,
    seams,
    stem,
    tokens,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("数据结构", ["数据", "据结", "结构", "构"]),
        ("FTS5", ["fts5"]),
        ("gpt-4o", ["gpt", "4o"]),
        ("snake_case", ["snake", "case"]),
        ("camelCase", ["camelcase"]),
        ("Ｆｕｌｌ ｗｉｄｔｈ １２３", ["full", "width", "123"]),
        ("café Straße naïve ÉCOLE", ["cafe", "strasse", "naive", "ecole"]),
        ("用 Python 写 FTS5 索引", ["用", "python", "写", "fts5", "索引", "引"]),
        ("东京tower", ["东京", "京", "tower"]),
        ("数据，结构", ["数据", "据", "结构", "构"]),
        ("hello 👋 world!!! 😀 ❤️ — …", ["hello", "world"]),
        ("Привет, мир! Ελληνικά", ["привет", "мир", "ελληνικα"]),
        ("", []),
    ],
)
def test_tokens_examples(text, expected):
    assert tokens(text) == expected


def test_japanese_kana_including_prolonged_sound_mark():
    assert tokens("カーテン") == ["カー", "ーテ", "テン", "ン"]
    assert tokens("ひらがな") == ["ひら", "らが", "がな", "な"]
    # The katakana middle dot is punctuation and breaks the run.
    assert tokens("テスト・です") == ["テス", "スト", "ト", "です", "す"]


def test_half_width_katakana_is_normalized():
    assert tokens("ｶﾀｶﾅ") == tokens("カタカナ")


def test_korean_hangul_is_kept_whole_not_split_into_jamo():
    assert tokens("한국어") == ["한국", "국어", "어"]


def test_index_text_joins_tokens():
    assert index_text("Hello, 世界!") == "hello 世界 界"


def test_query_terms_use_bigrams_for_cjk_runs():
    assert query_terms("数据结构课") == ["数据", "据结", "结构", "构课"]
    assert query_terms("课") == ["课"]
    assert set(query_terms("数据结构")) <= set(tokens("数据结构课"))


def test_query_terms_drop_stopwords_unless_nothing_is_left():
    assert query_terms("What is the FTS5 index?") == ["fts5", "index"]
    assert query_terms("what is the") == ["what", "is", "the"]
    assert query_terms("the 数据") == ["数据"]
    assert query_terms("how much is our rent, how many rooms") == ["rent", "rooms"]  # as 多少 in Chinese


def test_query_terms_drop_what_an_apostrophe_leaves_of_possessives_and_contractions():
    assert query_terms("my sister's wedding") == ["sister", "wedding"]
    assert query_terms("don't restart the worker") == ["don", "restart", "worker"]
    assert query_terms("I'll ask Anna's sister") == ["ask", "anna", "sister"]


def test_query_terms_are_deduplicated_in_first_occurrence_order():
    assert query_terms("search Search SEARCH 数据 数据") == ["search", "数据"]


def test_is_cjk():
    assert is_cjk("数据") and is_cjk("カタ") and is_cjk("한국") and is_cjk("ー")
    assert not is_cjk("") and not is_cjk("fts5") and not is_cjk("数a")


@pytest.mark.parametrize(
    "words",
    [
        ("deployments", "deployed", "deploying", "deploy"),
        ("running", "runs", "run"),
        ("hoping", "hopes", "hope"),
        ("agreed", "agree"),
        ("caresses", "caress"),
        ("organization", "organize", "organizing"),
        ("exercises", "exercising", "exercise"),
        ("happiness", "happy"),
    ],
)
def test_stem_conflates_forms_of_a_word(words):
    assert len({stem(w) for w in words}) == 1


@pytest.mark.parametrize("word", ["thing", "bus", "news", "数据", "4096", "Capital", "naïve"])
def test_stem_leaves_short_words_and_other_scripts_alone(word):
    assert stem(word) == word


def test_stem_conflates_inflections():
    assert stem("studies") == stem("study") == stem("studied")
    assert stem("notes") == stem("note")


def test_stem_option_applies_to_index_and_query():
    assert tokens("Running deployments 数据", stem=True) == ["run", "deploy", "数据", "据"]
    assert query_terms("the deployments", stem=True) == ["deploy"]


def test_tokens_survive_fts5_unicode61_whole():
    text = "用 Python 写 FTS5 索引 café カーテン 한국어 Ελληνικά हिन्दी"
    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    db.execute("INSERT INTO t VALUES (?)", (index_text(text),))
    assert {row[0] for row in db.execute("SELECT term FROM v")} == set(tokens(text))
    match = " ".join(f'"{term}"' for term in query_terms("数据结构 写索引"))
    db.execute("INSERT INTO t VALUES (?)", (index_text("写索引的数据结构课"),))
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone() == (1,)


# Property tests. The alphabet leans on the scripts the tokenizer cares about.
_mixed = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from("数据结构课用写索引カーテンひらがな한국어ｶﾀ　ａＢ１éß，。!- _\n"),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    ),
    max_size=60,
)


@given(_mixed)
def test_every_token_is_a_whole_unicode61_token(text):
    for token in tokens(text):
        assert token and token.isalnum() and " " not in token


@given(_mixed)
def test_tokenizing_is_deterministic(text):
    assert tokens(text) == tokens(text)
    assert query_terms(text) == query_terms(text)


@given(_mixed, st.booleans())
def test_query_terms_match_the_index_tokens_of_the_same_text(text, use_stem):
    indexed = tokens(text, stem=use_stem)
    for term in query_terms(text, stem=use_stem):
        if len(term) == 1 and is_cjk(term):  # a character is found as the start of a token
            assert any(token.startswith(term) for token in indexed)
        else:
            assert term in indexed


@given(st.text(st.sampled_from("数据结构课用写索引カーテン한국어"), min_size=1, max_size=12))
def test_every_cjk_character_starts_exactly_one_token(run):
    starts = [token[0] for token in tokens(run)]
    assert starts == list(run)


@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=80), st.booleans())
@example("Deployments were running_slowly: gpt-4o don't C++ v2.0.1 __init__ e.g. Wi-Fi\tTAB", True)
def test_an_ascii_text_splits_as_it_would_beside_chinese(text, use_stem):
    # All-ASCII text takes a shorter path; a Chinese word after it sends it down the general one.
    assert tokens(text + " 中", stem=use_stem) == [*tokens(text, stem=use_stem), "中"]


@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=80))
def test_index_text_is_idempotent_for_ascii(text):
    once = index_text(text)
    assert index_text(once) == once
    assert re.fullmatch(r"[a-z0-9 ]*", once)


@given(st.from_regex(r"[a-z]{1,12}", fullmatch=True))
def test_stem_never_empty_and_stable_on_ascii_words(word):
    result = stem(word)
    assert result and result.isalpha()


def test_chinese_question_words_leave_the_query() -> None:
    assert query_terms("我喝咖啡有什么习惯") == ["喝咖", "咖啡", "啡有", "习惯"]
    assert query_terms("室友的生日") == ["室友", "生日"]
    assert query_terms("什么") == ["什么"]  # nothing else to ask for: kept
    # Question words whose characters also begin content words go as whole pairs.
    assert query_terms("钢琴课几点上") == ["钢琴", "琴课"]
    assert query_terms("房贷每月扣多少钱") == ["房贷", "贷每", "每月", "月扣"]
    assert query_terms("几何作业") == ["几何", "何作", "作业"]


def test_chinese_function_words_leave_the_query_as_english_stopwords_do() -> None:
    # 一般, 已经, 是: how the question is put, not what it asks about; the pairs that straddle
    # them are seams between words.
    assert query_terms("社区义诊一般安排在周六") == ["社区", "区义", "义诊", "安排", "排在", "在周", "周六"]
    assert query_terms("摄影课已经上到第五节") == ["摄影", "影课", "上到", "到第", "第五", "五节"]
    assert query_terms("例会是每周三") == ["例会", "每周", "周三"]
    assert query_terms("一般") == ["一般"]  # nothing else to ask for: kept
    # 现在 and 目前 ("now") say when the question is asked, as "now" does in English.
    assert query_terms("老爸现在吃的降压药") == ["老爸", "降压", "压药"]
    assert query_terms("目前房租") == ["房租"]
    # 哪 with a measure word ("which one"), as 几个 is "how many".
    assert query_terms("坐哪个座位") == ["座位"]
    assert query_terms("住哪家民宿") == ["民宿"]
    # 这 and 那 point the same way: "that trip", "that flat", not words to look for.
    assert query_terms("新疆那趟") == ["新疆"]
    assert query_terms("番禺那套房子") == ["番禺", "房子"]  # not 套房, a suite
    assert query_terms("这次体检") == ["体检"]
    assert query_terms("那拉提草原") == ["那拉", "拉提", "提草", "草原"]  # a name that starts with 那
    # 每个 ("each") is a quantifier like 这个; 每月, 每周 say how often and stay.
    assert query_terms("每个月租金") == ["月租", "租金"]


def test_a_pair_between_two_known_words_is_a_seam() -> None:
    known = {"高铁", "喜欢", "朋友", "生日"}.__contains__

    def found(query: str) -> set[str]:
        return seams(cjk_pairs(query), known, query_terms(query))

    assert cjk_pairs("高铁喜欢 ok 朋友") == [["高铁", "铁喜", "喜欢"], ["朋友"]]
    assert found("高铁喜欢") == {"铁喜"}
    # A word the vault lacks keeps every pair: "女朋" has no known pair before it.
    assert found("女朋友生日") == {"友生"}
    assert found("量子力学") == set()
    # Separate runs never make a seam together, and a pair somebody wrote down is no seam.
    assert found("高铁 喜欢") == set()
    assert (
        seams(cjk_pairs("高铁喜欢"), {"高铁", "铁喜", "喜欢"}.__contains__, ["高铁", "铁喜", "喜欢"]) == set()
    )


def test_one_character_between_two_known_words_leaves_two_seams() -> None:
    known = {"国庆", "大理", "宁波", "机票"}.__contains__

    def found(query: str) -> set[str]:
        return seams(cjk_pairs(query), known, query_terms(query))

    # 去 is a word of its own, and the index keeps no character alone inside a run.
    assert found("国庆去大理") == {"庆去", "去大"}
    # Two characters between known words may be a word the vault lacks: 东京 is kept.
    assert found("宁波东京机票") == set()
    # Beside a function word, the two pairs can hold such a word: 的 bounds 东京 on one side only.
    assert found("宁波东京的机票") == set()
    # A run that starts with the two pairs has no known word before them.
    assert found("去大理") == set()


def test_a_function_word_bounds_a_seam_beside_a_known_word() -> None:
    known = {"喜欢", "座位", "家里", "名字"}.__contains__
    # 坐哪 and 哪个 leave the query (哪 with a measure word), so 欢坐 has a word on either side.
    assert seams(cjk_pairs("喜欢坐哪个座位"), known, query_terms("喜欢坐哪个座位")) == {"欢坐"}
    # Between two function words a pair is a word the vault may lack: 猫叫 is the cat.
    assert seams(cjk_pairs("家里的猫叫什么名字"), known, query_terms("家里的猫叫什么名字")) == set()
    # What bounds a seam is what the query leaves out: asked for, 坐哪 is a word the vault lacks.
    assert seams(cjk_pairs("喜欢坐哪个座位"), known, query_terms("喜欢坐哪个座位") + ["坐哪"]) == set()


def test_long_text_folds_like_short_text():
    # Long texts take another path through folding (a test for foldable characters first).
    for piece in ("Café NAÏVE Straße 数据结构 ｶﾀｶﾅ ", "臺灣的學費 ", "数据 Ünïcode "):
        assert len(piece * 60) > 256
        assert tokens(piece * 60) == tokens(piece) * 60


def test_traditional_chinese_folds_to_simplified() -> None:
    assert fold("學費與國小") == "学费与国小"
    assert tokens("學費") == tokens("学费")
    assert query_terms("你們的學費是多少") == query_terms("你们的学费是多少") == ["学费"]
    # Characters with no Simplified form, kana and Hangul are left as they are.
    assert fold("乾隆 カーテン 한국어") == "干隆 カーテン 한국어"
    forms = tokenize._simplified_forms()
    assert len(forms) > 2500 and not set(forms.values()) & set(forms)  # folded all the way


_TRADITIONAL = sorted(tokenize._simplified_forms())


@given(st.text(st.sampled_from(_TRADITIONAL[::7] + list("的了数据结构薴苧 Aé")), max_size=300))
def test_folding_is_idempotent_and_keeps_one_character_for_one(text):
    folded = fold(text)
    assert fold(folded) == folded  # 薴 -> 苧 -> 苎 is folded all the way at once
    assert len(folded) == len(text.casefold())


def test_the_long_text_test_finds_every_traditional_character():
    # A long text is translated only when this finds a character that folds.
    foldable = tokenize._foldable_re()
    assert [char for char in _TRADITIONAL if not foldable.search("数据" * 200 + char)] == []
    assert foldable.search("数据" * 200 + "学费") is None


def test_a_plural_acronym_is_also_its_singular_in_the_index_and_in_queries() -> None:
    text = "two PRs, the VMs, our KPIs and LLMs; APIs"
    # Snowball cuts the s of apis itself; of kpis, llms, and of every word of three letters, not.
    assert acronym_singulars(text, stem=True) == ["pr", "vm", "kpi", "llm"]
    assert set(acronym_singulars(text, stem=True)) <= set(index_text(text, stem=True).split())
    assert query_terms("KPIs for VMs", stem=True) == ["kpi", "vm"]
    # The case tells a plural acronym from a word, a version or a name run together.
    assert acronym_singulars("gas bus yes Yes K8s MP3s SAMS iOS x86s") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wi-Fi and e-mail", ["wifi", "email"]),
        ("GPT-4 since COVID-19", ["gpt4", "covid19"]),
        ("three follow-ups, one-on-one", ["followup", "oneonon"]),  # stemmed as one word
        # Dates, times and ranges are no compounds; nor a slug or identifier of four parts or more.
        ("on 2026-03-15, pages 10-12, at 2026-01-05T09:00", []),
        ("a 3-D print", []),
        ("ledger-db-postgresql-15", []),
        ("a - b, x--y, -flag", []),
        ("数据-base", []),
    ],
)
def test_hyphenated_words_are_indexed_written_together(text, expected):
    assert compounds(text, stem=True) == expected
    assert set(expected) <= set(index_text(text, stem=True).split())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("wi fi", {"wifi": ("wi", "fi")}),
        ("Wi-Fi", {"wifi": ("wi", "fi")}),
        ("tp link", {"tplink": ("tp", "link")}),
        ("iPhone 15", {"iphone15": ("iphon", "15")}),
        ("sign up", {"signup": ("sign",)}),  # a stopword is not asked for alone, so not stood for
        ("in to", {}),
        ("Paris, France", {}),  # punctuation between two words: no compound
        ("2026 03", {}),
        ("15 inch", {}),
        ("数据 base", {}),
    ],
)
def test_a_query_asks_for_its_adjacent_words_written_together(query, expected):
    assert query_compounds(query, stem=True) == expected


@given(st.lists(st.from_regex(r"[A-Za-z][a-z0-9]{0,7}", fullmatch=True), min_size=2, max_size=2))
def test_a_compound_written_any_way_meets_the_index(parts):
    together = "".join(parts)
    # Written hyphenated, asked for together (unless together it reads as a plural acronym, asked
    # for as its singular: AAs is AA, not A-As); written together, asked for apart or hyphenated.
    if not acronym_singulars(together):
        assert set(query_terms(together, stem=True)) <= set(index_text("-".join(parts), stem=True).split())
    for query in (" ".join(parts), "-".join(parts)):
        joins = query_compounds(query, stem=True)
        assert set(joins) <= set(tokens(together, stem=True))
        assert joins or all(part.lower() in tokenize._STOPWORDS for part in parts)


@pytest.mark.parametrize(
    ("form", "other"),
    [
        # British and American spellings
        ("colours", "colors"),
        ("favourite", "favorite"),
        ("neighbourhood", "neighborhood"),
        ("organisation", "organization"),
        ("realising", "realizing"),
        ("analysed", "analyzed"),
        ("centred", "centered"),
        ("metres", "meters"),
        ("catalogue", "catalog"),
        ("grey", "gray"),
        ("programme", "program"),
        ("defence", "defense"),
        ("licences", "licenses"),
        # irregular forms and their base
        ("went", "going"),
        ("gone", "go"),
        ("bought", "buying"),
        ("met", "meeting"),
        ("ran", "runs"),
        ("took", "takes"),
        ("written", "writing"),
        ("chose", "choosing"),
        ("children", "child"),
        ("teeth", "tooth"),
        ("wives", "wife"),
        # clipped forms and the word they clip
        ("appt", "appointments"),
        ("dept", "department"),
        ("db", "databases"),
        ("repos", "repository"),
        ("config", "configuration"),
        ("bday", "birthday"),
        # short verbs ending in y
        ("try", "tried"),
        ("fly", "flying"),
        ("flew", "flies"),
        ("dry", "dries"),
    ],
)
def test_forms_of_one_word_stem_alike(form, other):
    assert stem(form) == stem(other)
    assert query_terms(form, stem=True) == tokens(other, stem=True)


@pytest.mark.parametrize(
    "word",
    [
        # only look British
        *(
            "four",
            "hours",
            "tour",
            "yours",
            "raise",
            "noise",
            "rise",
            "vogue",
            "crisis",
            "journey",
            "resource",
        ),
        # irregular forms that are mostly other words
        *("left", "led", "sat", "shot", "rose", "born", "lives", "leaves", "drew"),
        # clippings of several words, or that would meet another word (prod: product)
        *("doc", "docs", "app", "temp", "min", "prod", "spec"),
        # short words, mostly names and acronyms, kept whole
        *("ios", "aws", "ups"),
    ],
)
def test_other_words_are_stemmed_by_snowball_alone(word):
    assert stem(word) == (word if len(word) <= 3 else tokenize._ENGLISH.stemWord(word))


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("iPhone15", "iPhone 15"),
        ("win11", "Win 11"),
        ("3090ti", "3090 Ti"),
        ("gpt4o", "GPT 4 o"),
        ("python3", "Python 3"),
    ],
)
def test_a_word_of_letters_and_digits_splits_into_the_words_it_is_made_of(word, parts):
    (term,) = query_terms(word, stem=True)
    assert letter_digit_parts(term, stem=True) == tokens(parts, stem=True)


@pytest.mark.parametrize("word", ["python", "2026", "数据", "ab_12"])
def test_a_word_of_letters_or_digits_alone_does_not_split(word):
    assert letter_digit_parts(word, stem=True) == []
