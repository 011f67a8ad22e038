"""One tokenizer for indexing and querying, as good in Chinese as in English.

Cairn tokenizes here, in Python, the same way whatever SQLite it runs on, and stores
space-joined tokens in FTS5 columns read by ``unicode61``. Every token is therefore made of
Unicode letters and digits only (``token.isalnum()``), so ``unicode61`` keeps it whole.

- Text is NFKC-normalized (full-width ASCII becomes ASCII) and case-folded; combining marks are
  dropped outside CJK, so ``é`` -> ``e`` and Greek or Arabic accents fold too (``unicode61``
  would otherwise split a word at each mark). Traditional Chinese characters fold to their
  Simplified form (OpenCC's character table), so ``學費`` and ``学费`` meet, whichever was written.
- Runs of non-CJK letters and digits are words: ``gpt-4o`` -> ``gpt``, ``4o``.
- CJK runs (Han, kana, Hangul) give every adjacent bigram and the run's last character, so a
  query for ``数据结构`` (bigrams ``数据 据结 结构``) finds ``数据结构课`` with no dictionary.
  Every character of a run starts exactly one token, so a one-character query is a prefix
  query (``课*``); storing every unigram as well would make the index a third larger for them.
- A plural acronym is indexed as its singular too (``VMs`` -> ``vm``, ``KPIs`` -> ``kpi``; the
  case tells it from a word such as ``gas``), and a query asks for the singular.
- A hyphenated word is indexed written together too (``compounds``: ``Wi-Fi`` -> ``wifi``), and a
  query's adjacent words also ask for themselves written together (``query_compounds``), so
  ``WiFi``, ``Wi-Fi`` and ``wi fi`` all meet.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator
from functools import lru_cache

import opencc
import Stemmer

from . import dates, english

__all__ = [
    "acronym_singulars",
    "cjk_pairs",
    "compounds",
    "fold",
    "function_pairs",
    "has_content",
    "index_text",
    "is_cjk",
    "letter_digit_parts",
    "months",
    "query_compounds",
    "query_terms",
    "seams",
    "simplified",
    "stem",
    "stem_without_i",
    "tokens",
]

# Han (URO, Ext A, Ext B-G, compatibility), iteration marks, hiragana, katakana with the
# prolonged sound mark (but not the middle dot, which is punctuation), Hangul jamo and syllables.
_CJK_CHARS = (
    "\u1100-\u11ff\u3005-\u3007\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3"
    "\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003134f"
)
# `[^\W_]` is exactly one `str.isalnum()` character. A CJK run is matched by block alone (fast);
# the rare unassigned code point inside a CJK block is split out afterwards.
_RUN_RE = re.compile(rf"([{_CJK_CHARS}]+)|([^\W_{_CJK_CHARS}]+)")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")
_ASCII_WORD_RE = re.compile(r"[^\W_]+", re.ASCII)  # _RUN_RE's words, in a text that is all ASCII
# The same blocks as (first, last) code points, for testing one character without compiling a
# third regex over them (each such class costs ~7 ms at every start of the command line).
_CJK_RANGES = sorted((ord(_CJK_CHARS[i]), ord(_CJK_CHARS[i + 2])) for i in range(0, len(_CJK_CHARS), 3))
_CJK_STARTS = [first for first, _ in _CJK_RANGES]

# Index and queries stem English words (``hiking`` and ``hike`` meet); an index built with
# another setting, or another release of the stemmer (whose stems may differ), is rebuilt: the
# index schema version names both.
STEM_ENGLISH = True
STEMMER = f"snowball-english/{Stemmer.version()}+{english.VERSION}" if STEM_ENGLISH else "none"
STEMMER += "+no-initials"  # names are no longer indexed as their initials: an older index is rebuilt
# Likewise the Traditional-to-Simplified table: another OpenCC release may fold differently.
FOLDING = f"opencc-t2s/{opencc.__version__}"

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each either few for
    from had has have having he her here hers him his how i if in into is it its itself just me
    many more most much my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would you your yours
    s t d ll m re ve
"""
# The last line: what an apostrophe leaves of possessives and contractions (sister's, don't, I'll).
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Chinese particles, pronouns, question words and the copula 是: characters that rarely start or
# end a content word.
_CJK_FUNCTION_CHARS = frozenset("的了吗呢吧啊么哪怎谁什我你他她它是")
# Question words made of two characters that each also begin content words (几 in 几何, 多 in
# 多数, 如 in 如果), then common function words (已经, 因为, 时候): Chinese has no spaces to
# leave them out, as English stopwords are. Dropped as whole pairs, with the pairs that
# straddle them, as the characters above are.
_CJK_QUESTION_TEXT = "几点 几号 几个 几天 几次 几岁 几年 几月 几时 几分 几位 多少 多久 多大 多长 如何 是否"
_CJK_FUNCTION_TEXT = """
    已经 以后 以前 一般 一共 一直 一起 一下 一些 一定 一样 可以 应该 能够 这个 那个 这些 那些 每个
    这样 那样 这么 那么 怎样 因为 所以 但是 然后 还是 就是 或者 如果 虽然 而且 并且 不过 只是
    还有 之前 之后 时候 的话 自己 比较 非常 特别 总是 经常 有点 没有 不是 其他 其实 关于 对于
    现在 目前
"""
# 哪 ("which"), 这 ("this") and 那 ("that") with a measure word point at a thing without naming
# it, as 哪个, 这个 and 那个 do: the pairs on either side are seams too ("哪个座位": 个座, "新疆那趟":
# 疆那). 这 and 那 stay out of the characters above: 那 starts names (那拉提, 那不勒斯).
_CJK_MEASURES = "个位些家里儿天次种年门所本条款件张只间趟套场回顿段份项台辆部篇首双对块把座栋层封盒瓶杯碗颗句笔支片批届期周晚阵"
_CJK_POINTING = [f"{which}{measure}" for which in "哪这那" for measure in _CJK_MEASURES]
_CJK_FUNCTION_PAIRS = frozenset(_CJK_QUESTION_TEXT.split() + _CJK_FUNCTION_TEXT.split() + _CJK_POINTING)


# English compounds are written apart, hyphenated or together (e-mail, email; TP-Link, TPLink).
# Two or three parts, the first starting with a letter: a longer chain is a slug or an identifier,
# and one that starts with a number is a date, a time or a range (2026-03-15, 10-12).
_HYPHENATED_RE = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+){1,2}(?![\w-])", re.ASCII)
# Where one may be: a hyphen inside a word. Searched for first, since a search that starts at a
# literal character skips ahead fast (a seventh of the time of finding compounds everywhere).
_INNER_HYPHEN_RE = re.compile(r"-(?<=[a-z0-9]-)(?=[a-z0-9])", re.ASCII)
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_QUERY_WORD_RE = re.compile(r"[a-z0-9]+", re.ASCII)
_LETTERS_OR_DIGITS_RE = re.compile(r"[a-z]+|[0-9]+", re.ASCII)


# Two to six capitals and a lower-case s: the plural of an acronym (VMs, KPIs, PDFs). Its case
# tells it from a word (gas, bus, yes), which folded tokens no longer can; Snowball cuts the s of
# few of them (APIs: api, but kpis, pdfs), and of none of three letters (vms: kept whole, as ios).
_ACRONYM_PLURAL_RE = re.compile(r"[A-Z][A-Z0-9]{0,4}[A-Z]s(?![A-Za-z0-9])")


def acronym_singulars(text: str, *, stem: bool = False) -> list[str]:
    """The singulars of a not-folded text's plural acronyms, where they are not the plural's own
    token: ``VMs``, ``KPIs`` -> ``vm``, ``kpi``; not ``APIs`` (Snowball's ``api``), nor ``K8s``."""
    if not _ACRONYM_PLURAL_RE.search(text):  # most texts: one scan, no generator
        return []
    made = (m.group()[:-1].lower() for m in _plural_acronyms(text))
    if stem:
        return list(dict.fromkeys(_stem(a) for a in made if _stem(a) != _stem(a + "s")))
    return list(dict.fromkeys(made))


def _singular_acronyms(text: str) -> str:
    """A query with its plural acronyms written as singulars (``VMs`` -> ``VM``)."""
    pieces: list[str] = []
    end = 0
    for m in _plural_acronyms(text):
        pieces += [text[end : m.start()], m.group()[:-1]]
        end = m.end()
    return "".join([*pieces, text[end:]])


def _plural_acronyms(text: str) -> Iterator[re.Match[str]]:
    for m in _ACRONYM_PLURAL_RE.finditer(text):
        before = text[m.start() - 1] if m.start() else " "
        if not (before.isascii() and before.isalnum()):
            yield m


def tokens(text: str, *, stem: bool = False, folded: bool = False) -> list[str]:
    """Split text into index tokens, in text order.

    Args:
        text: any text.
        stem: apply :func:`stem` to ASCII words (use the same setting when querying).
        folded: ``text`` is already ``fold(text)``.

    Returns:
        Words (lower case, diacritics removed) and, for CJK runs, the bigram that starts at
        each character, the last character standing alone. Every token satisfies
        ``token.isalnum()``.
    """
    text = text if folded else fold(text)
    if text.isascii():  # no CJK run to pair up: the words alone, in one pass (isascii() is O(1))
        words = _ASCII_WORD_RE.findall(text)
        return [_stem(w) for w in words] if stem else words
    out: list[str] = []
    # _runs() inlined, and map() for the per-character work: this is the indexing hot path.
    for cjk, word in _RUN_RE.findall(text):
        if word:
            out.append(_stem(word) if stem else word)
            continue
        for run in (cjk,) if cjk.isalnum() else filter(None, _NOT_ALNUM_RE.split(cjk)):
            out += map(operator.add, run, run[1:])
            out.append(run[-1])
    return out


def index_text(text: str, *, stem: bool = False) -> str:
    """Return ``tokens(text)``, the text's ``acronym_singulars``, ``compounds`` and
    ``months`` joined by single spaces, ready for an FTS5 column."""
    folded = fold(text)
    return " ".join(
        tokens(folded, stem=stem, folded=True)
        + acronym_singulars(text, stem=stem)
        + compounds(folded, stem=stem, folded=True)
        + months(folded, stem=stem)
    )


def months(folded: str, *, stem: bool = False) -> list[str]:
    """The months that the dates in a folded text name, as English words (``2026-10-14`` and
    ``10月`` -> ``october``), with each day written with a leading zero, without it
    (``dates.month_words``). Indexed beside the text's own tokens: what a query asks for a date."""
    return [_stem(w) if stem else w for w in dates.month_words(folded)]


def compounds(text: str, *, stem: bool = False, folded: bool = False) -> list[str]:
    """The text's hyphenated words of two or three parts, written together: ``Wi-Fi`` -> ``wifi``,
    ``GPT-4`` -> ``gpt4``, ``follow-ups`` -> ``followup`` (stemmed as a word). Not a date, a time
    or a range (``2026-03-15``, ``10-12``): a compound starts with a letter. Indexed beside the
    parts, so that a query for the word written together finds it hyphenated."""
    text = text if folded else fold(text)
    made: list[str] = []
    end = 0
    for hyphen in _INNER_HYPHEN_RE.finditer(text):
        if hyphen.start() < end:  # inside the compound just found
            continue
        start = hyphen.start()
        while start and text[start - 1] in _WORD_CHARS:
            start -= 1
        if found := _HYPHENATED_RE.match(text, start):
            made.append(found.group().replace("-", ""))
            end = found.end()
    return list(dict.fromkeys(_stem(w) if stem else w for w in made))


def query_compounds(text: str, *, stem: bool = False) -> dict[str, tuple[str, ...]]:
    """What a query's words could be written together as, each with the terms it stands for: two
    adjacent English words (``wi fi``, ``Wi-Fi`` -> ``wifi``; ``tp link`` -> ``tplink``) and
    a hyphenated word of three parts (``one-on-one`` -> ``oneonone``). A stopword is not asked
    for alone, so it is not stood for (``sign up`` -> ``signup`` for ``sign``); two stopwords
    make nothing (``in to``). Search keeps only those some note holds."""
    folded = fold(text)
    words = list(_QUERY_WORD_RE.finditer(folded))
    made: dict[str, tuple[str, ...]] = {}

    def add(parts: list[re.Match[str]]) -> None:
        spelled = [m.group() for m in parts]
        asked = tuple(_stem(w) if stem else w for w in spelled if w not in _STOPWORDS)
        joined = "".join(spelled)
        if asked and joined[0].isalpha():  # as ``compounds`` makes them
            made.setdefault(_stem(joined) if stem else joined, asked)

    for first, second in itertools.pairwise(words):
        gap = folded[first.end() : second.start()]
        if gap == "-" or (gap.isspace() and "\n" not in gap):
            add([first, second])
    for match in _HYPHENATED_RE.finditer(folded):
        if match.group().count("-") == 2:
            add(list(_QUERY_WORD_RE.finditer(match.group())))
    return made


def letter_digit_parts(term: str, *, stem: bool = False) -> list[str]:
    """A query word of letters and digits written together, as the words it is made of:
    ``iphone15`` -> ``iphon``, ``15`` (stemmed as words); ``win11`` -> ``win``, ``11``. Search
    asks for them when no note holds the word itself, since notes write ``iPhone 15`` as often as
    ``iPhone15``. Empty for a word of letters or digits alone, or of other characters."""
    parts = _LETTERS_OR_DIGITS_RE.findall(term) if term.isascii() and term.isalnum() else []
    return query_terms(" ".join(parts), stem=stem) if len(parts) > 1 else []


def query_terms(text: str, *, stem: bool = False) -> list[str]:
    """Turn a search query into terms that the index can contain.

    English stopwords are dropped unless nothing else would be left. A one-character CJK run
    gives its unigram; a longer run gives only its bigrams, which must appear side by side in
    a document for all of them to match. Bigrams that hold a Chinese particle, pronoun or
    question word (的 了 吗 什 么 我 ...), or that are or straddle a function word (已经, 时候),
    are dropped like stopwords.

    Args:
        text: the query as a person or a model typed it.
        stem: must match the setting used when indexing.

    Returns:
        Distinct terms in order of first occurrence. Each is in ``tokens(text, stem=stem)``, but
        that a date is asked for as its month's name and its numbers (``dates.as_asked``:
        ``3月5日`` and ``2026-03-05`` ask for ``march`` and ``5``), as the index names it too, and
        a plural acronym as its singular (``VMs``: ``vm``, see ``acronym_singulars``).
    """
    kept, stopped = _kept_and_stopped(text, stem)
    return list(dict.fromkeys(kept or stopped))


def function_pairs(text: str) -> list[str]:
    """The CJK pairs ``query_terms`` leaves out of a query as particles, question or function
    words, or pairs straddling them (``用的``, ``的电``, ``什么``), in order."""
    return list(dict.fromkeys(t for t in _kept_and_stopped(text, False)[1] if len(t) == 2 and is_cjk(t)))


def has_content(text: str) -> bool:
    """Whether ``text`` holds a word that is not a stopword, or a CJK character that is neither a
    particle nor part of a function word (``猫`` in ``我的猫怎么了``, whose pairs all hold one)."""
    if _kept_and_stopped(text, False)[0]:
        return True
    for kind, run in _runs(text):
        if kind == "cjk":
            function_at = {i for i in range(len(run) - 1) if run[i : i + 2] in _CJK_FUNCTION_PAIRS}
            for i, char in enumerate(run):
                if char not in _CJK_FUNCTION_CHARS and not function_at.intersection((i - 1, i)):
                    return True
    return False


def _kept_and_stopped(text: str, stem: bool) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    stopped: list[str] = []
    for kind, run in _runs(dates.as_asked(fold(_singular_acronyms(text)))):
        if kind == "cjk":
            if len(run) == 1:
                (stopped if run in _CJK_FUNCTION_CHARS else kept).append(run)
            else:
                function_at = {i for i in range(len(run) - 1) if run[i : i + 2] in _CJK_FUNCTION_PAIRS}
                for i in range(len(run) - 1):
                    pair = run[i : i + 2]
                    # A pair holding a particle or question word ("有什", "什么", "的生", "课几")
                    # is the seam between two content words, not one: asking for it only adds noise.
                    function = (
                        pair[0] in _CJK_FUNCTION_CHARS
                        or pair[1] in _CJK_FUNCTION_CHARS
                        or not function_at.isdisjoint((i - 1, i, i + 1))
                    )
                    (stopped if function else kept).append(pair)
        else:
            term = _stem(run) if stem else run
            (stopped if run in _STOPWORDS else kept).append(term)
    return kept, stopped


def cjk_pairs(text: str) -> list[list[str]]:
    """The CJK bigrams of a query, run by run, particles and question words included: what
    ``seams`` looks at (a seam needs a pair on either side, so only runs of three pairs or more)."""
    return [[run[i : i + 2] for i in range(len(run) - 1)] for kind, run in _runs(text) if kind == "cjk"]


def seams(runs: list[list[str]], known: Callable[[str], bool], asked: Collection[str]) -> set[str]:
    """The CJK bigrams of a query (``cjk_pairs``) that only straddle the boundary between two words.

    Chinese is written without spaces, so ``高铁喜欢`` gives ``高铁 铁喜 喜欢``. When no note
    holds ``铁喜`` (``known`` is False) while notes hold the pairs on either side of it, each of its
    characters already belongs to a word the vault knows: it is a seam, and counting it as a
    missing part of the query makes a good answer look weak. A word the vault lacks is never a
    seam: its first or last pair has no known neighbour (``量子力学`` keeps ``量子`` and ``子力``).

    A function word that the query leaves out (a pair of the runs not in ``asked``, the terms
    ``query_terms`` kept) bounds a word as a known one does: in ``喜欢坐哪个座位``, ``欢坐`` sits
    between ``喜欢`` and ``坐哪``. Between two function words, though, a pair is a word of its own
    that the vault may lack (``的猫叫什``: ``猫叫`` holds the cat), so one side must be known.

    A word of one character between two known words (去 in ``国庆去大理``) makes two such pairs in
    a row, ``庆去 去大``: seams too, since the index holds no character alone inside a run, so no
    note could hold it as asked. Only between two known words: beside a function word, the two
    pairs can hold a word of two characters the vault lacks (``宁波东京的``: ``东京``).
    """
    stop = {pair for pairs in runs for pair in pairs if pair not in asked}

    def bound(pair: str) -> bool:
        return pair in stop or known(pair)

    def unknown(pair: str) -> bool:
        return pair not in stop and not known(pair)

    found = set()
    for pairs in runs:
        for i in range(1, len(pairs) - 1):
            before, pair, after = pairs[i - 1], pairs[i], pairs[i + 1]
            if not unknown(pair):
                continue
            if bound(before) and bound(after) and (known(before) or known(after)):
                found.add(pair)
            elif unknown(after) and i + 2 < len(pairs) and known(before) and known(pairs[i + 2]):
                found.update((pair, after))
    return found


def is_cjk(term: str) -> bool:
    """Return True if ``term`` is non-empty and made only of CJK characters."""
    return bool(term) and all(map(_is_cjk_char, term))


def _is_cjk_char(char: str) -> bool:
    code = ord(char)
    at = bisect.bisect_right(_CJK_STARTS, code) - 1
    return at >= 0 and code <= _CJK_RANGES[at][1]


def _runs(text: str) -> list[tuple[str, str]]:
    runs: list[tuple[str, str]] = []
    for cjk, word in _RUN_RE.findall(fold(text)):
        if word:
            runs.append(("word", word))
        elif cjk.isalnum():
            runs.append(("cjk", cjk))
        else:
            runs += [("cjk", part) for part in _NOT_ALNUM_RE.split(cjk) if part]
    return runs


def symbols(text: str) -> list[str]:
    """The emoji and other pictographs in ``text`` (Unicode category So), each once, in order:
    ``tokens`` keeps letters and digits only, and a title's 🚀 is how some people name a note."""
    return list(dict.fromkeys(c for c in text if not c.isascii() and unicodedata.category(c) == "So"))


def fold(text: str) -> str:
    """Text as tokens are made of it: NFKC, case-folded, accents removed outside CJK, Traditional
    Chinese characters made Simplified. Each character folds to at most one, so only NFKC and
    case folding change a text's length."""
    if text.isascii():
        return text.lower()
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    if len(text) < 256:  # a query or a title: translating costs less than testing first
        return text.translate(_FOLD_TABLE)
    return text.translate(_FOLD_TABLE) if _foldable_re().search(text) else text


@lru_cache(maxsize=1)
def _foldable_re() -> re.Pattern[str]:
    """Characters that folding may change: neither ASCII nor CJK nor CJK punctuation, or
    Traditional Chinese. Most text has none. Made on first use (~17 ms, 10 of them reading the
    Traditional table): a command that meets no long text beyond ASCII never needs it."""
    # One class of what never folds (CJK less its Traditional characters), not an alternative of
    # two: each character is tested once, at half the cost.
    return re.compile(
        rf"[^\x00-\x7f\u3000-\u303f{''.join(_ranges_without(_CJK_RANGES, _simplified_forms()))}]"
    )


def _ranges_without(ranges: list[tuple[int, int]], left_out: Collection[str]) -> Iterator[str]:
    """Ranges of code points, less the characters ``left_out``, as ranges of a regex class."""
    holes = sorted(ord(char) for char in left_out)
    for first, last in ranges:
        at = bisect.bisect_left(holes, first)
        start = first
        while at < len(holes) and holes[at] <= last:
            if holes[at] > start:
                yield f"{chr(start)}-{chr(holes[at] - 1)}"
            start = holes[at] + 1
            at += 1
        if start <= last:
            yield f"{chr(start)}-{chr(last)}"


class _FoldTable(dict[int, str]):
    """``str.translate`` table that works out each character's folding once, on first sight."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        # NFD only outside CJK: it would split Hangul syllables into jamo and kana into base + mark.
        if char.isascii():
            folded = char
        elif _is_cjk_char(char):
            folded = _simplified_forms().get(char, char)
        else:
            folded = "".join(
                c for c in unicodedata.normalize("NFD", char) if not unicodedata.category(c).startswith("M")
            )
        self[code] = folded
        return folded


_FOLD_TABLE = _FoldTable()


def simplified(text: str) -> str:
    """``text`` with each Traditional Chinese character made Simplified as ``fold`` makes it, one
    for one: a place in the result is the same place in ``text``."""
    return text if text.isascii() else text.translate(_simplified_table())


@lru_cache(maxsize=1)
def _simplified_table() -> dict[int, str]:
    return str.maketrans(_simplified_forms())


# Where OpenCC's Traditional-to-Simplified table is read: the unified ideographs and extension A
# hold every Traditional character in use; reading the rarer extensions too would triple the cost.
_TRADITIONAL_BLOCKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF))


@lru_cache(maxsize=1)
def _simplified_forms() -> dict[str, str]:
    """Each Traditional character with its Simplified form, one character for one, by OpenCC's
    ``t2s`` tables: read once a process (~10 ms), on the first CJK character it folds."""
    chars = [chr(code) for first, last in _TRADITIONAL_BLOCKS for code in range(first, last + 1)]
    # Line breaks keep the characters apart, so that each converts alone (not as part of a phrase).
    # Left out: the tables that may give a character no font shows, which no one could type.
    converted = opencc.OpenCC("t2s", include_tofu_risk_dictionaries=False).convert("\n".join(chars))
    forms = {
        char: simple
        for char, simple in zip(chars, converted.split("\n"), strict=True)
        if simple != char and len(simple) == 1  # one for one keeps every bigram in place
    }
    # A few characters convert to one that converts again: fold them all the way.
    return {char: forms.get(simple, simple) for char, simple in forms.items()}


# --- stemming: Snowball's English (Porter2) stemmer, from PyStemmer ---------------------------


def stem(word: str) -> str:
    """The Snowball English (Porter2) stem of a word, after :func:`english.base_form` (an
    irregular form's base, the American spelling): ``deployments`` -> ``deploy``,
    ``organisation`` and ``organization`` -> ``organiz``, ``went`` -> ``go``,
    ``allergies`` -> ``allergi``.

    Only lower-case ASCII words change, and of three letters or fewer only irregular forms
    (``ran`` -> ``run``) and verbs ending in a ``y`` (``try`` -> ``tri``, as ``tried``); anything
    else (CJK, digits, other scripts) comes back as given. The result is what matters for search,
    not spelling.

    Args:
        word: one token as produced by :func:`tokens`.

    Returns:
        The stem, never empty.
    """
    return _stem(word)


_ENGLISH = Stemmer.Stemmer("english")


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    if not (word.isascii() and word.isalpha() and word.islower()):
        return word
    word = english.base_form(word)
    # Snowball would cut short words that are mostly names and acronyms (ios -> io, aws -> aw),
    # but a short verb's y must go as it goes from its other forms (try, tried, tries: tri);
    # Snowball itself keeps the y after a vowel (buy, key).
    if len(word) > 3 or (len(word) == 3 and word[2] == "y"):
        return _ENGLISH.stemWord(word)
    return word


# What ``months`` may add to a text's terms, stemmed or not: a text may hold these through a date
# alone.
MONTH_TERMS = frozenset([*dates.MONTHS, *map(_stem, dates.MONTHS), *"123456789"])


def written_forms(term: str) -> tuple[str, ...]:
    """The ways a text may write a stemmed term that do not hold it as a substring, which a
    substring test for the term would miss: the irregular, clipped and British forms
    ``english.base_form`` makes it from (``tooth``: ``teeth``; ``appoint``: ``appt``, ``appts``),
    and the British ``-tre`` of an American ``-ter`` (``center``: ``centre``)."""
    forms = _forms_by_stem().get(term, ())
    return (*forms, term[:-2] + "re") if term.endswith("ter") and term.isascii() else forms


@lru_cache(maxsize=1)
def _forms_by_stem() -> dict[str, tuple[str, ...]]:
    # Made at first use, not import: stemming the lists costs a few milliseconds.
    by_stem: dict[str, list[str]] = {}
    for word, forms in english.other_forms().items():
        by_stem.setdefault(_stem(word), []).extend(forms)
    return {stem: tuple(forms) for stem, forms in by_stem.items()}


def stem_without_i(term: str) -> str | None:
    """The shorter stem a derived word may have: Porter2 keeps the ``y`` of a noun as ``i`` but
    drops it from the adjective (``allergy`` -> ``allergi``, ``allergic`` -> ``allerg``; so
    ``economi``/``econom``, ``histori``/``histor``). None for a term that ends otherwise."""
    if len(term) > 5 and term.endswith("i") and term.isascii() and term.isalpha():
        return term[:-1]
    return None
