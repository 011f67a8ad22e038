"""Query analysis: a query's text as the terms a search asks for, in one pass.

A pure function of the text (``cairn.tokenize`` folds, stems, pairs CJK and reads dates, as it
did for the index) plus a small ``Vocabulary`` handed in for what only the vault can say: how
many notes hold a term. It never calls the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from .. import tokenize

# A Chinese function pair (用的, 的电, 什么) that some note holds is asked for, at its IDF, beside
# the query's content words; one that no note holds costs nothing. (benchmarks/results/
# ablations.md, row "Chinese function pairs left out of queries")
# English stopwords stay out: asked at their IDF they lowered LoCoMo and the English held-out
# sets (benchmarks/results/ablations.md, row "English stopwords kept in queries").
FUNCTION_PAIRS_BY_IDF = True
MAX_QUERY_TERMS = 64  # a longer query (a pasted page) searches for its rarest terms the vault holds
# A shorter English term is a whole word, not the start of one: as a prefix, ``car`` would find
# ``card`` and ``career``, and ``wed`` (the stem of ``wedding``) ``wednesday``.
MIN_PREFIX = 4


@dataclass(frozen=True)
class TermStats:
    """Notes in the full-text index, and how many hold each term (a CJK character: any bigram it
    starts), with a floor for how many hold it outside the private column."""

    notes: int
    docs: dict[str, int]
    public: dict[str, int]


class Vocabulary(Protocol):
    """What analysis may ask of the vault: the few lookups that tell terms it holds."""

    def term_stats(self, terms: Sequence[str]) -> TermStats:
        """How many notes there are and how many hold each of ``terms``."""
        ...


class Analysis(NamedTuple):
    """A query's terms (the joined words it stands for last), how many notes hold each, and the
    terms each joined word stands for."""

    terms: list[str]
    stats: TermStats
    stands_for: dict[str, tuple[str, ...]]


def analyse(query: str, vocabulary: Vocabulary) -> Analysis:
    """The query's terms, less the CJK seams between words (``tokenize.seams``), and how
    many notes hold each, with the Chinese function pairs some note holds
    (``FUNCTION_PAIRS_BY_IDF``); then the query's words written together that a note holds
    (``tokenize.query_compounds``), with the terms they stand for. A word of letters and
    digits that no note holds is asked as its parts (``tokenize.letter_digit_parts``)."""
    terms = search_terms(query)
    runs = [pairs for pairs in tokenize.cjk_pairs(query) if len(pairs) > 2]  # long enough for a seam
    joins: dict[str, tuple[str, ...]] = {}
    if len(terms) <= MAX_QUERY_TERMS:  # not for a pasted page: its rarest words carry it (below)
        compounds = tokenize.query_compounds(query, stem=tokenize.STEM_ENGLISH)
        joins = {joined: parts for joined, parts in compounds.items() if joined not in terms}
    splits = {t: s for t in terms if (s := tokenize.letter_digit_parts(t, stem=tokenize.STEM_ENGLISH))}
    pieces = [p for split in splits.values() for p in split]
    functional = (
        [p for p in tokenize.function_pairs(query) if p not in terms] if FUNCTION_PAIRS_BY_IDF else []
    )
    asked = dict.fromkeys([*terms, *(p for pairs in runs for p in pairs), *joins, *pieces, *functional])
    stats = vocabulary.term_stats(list(asked))
    # A term no note holds is asked as what it may be written as instead.
    instead = {t: split for t, split in splits.items() if not stats.docs.get(t)}
    if runs:
        seams = tokenize.seams(runs, lambda pair: stats.docs.get(pair, 0) > 0 or pair in instead, terms)
        terms = [t for t in terms if t not in seams] or terms
    if instead:
        terms = list(dict.fromkeys(t for term in terms for t in instead.get(term, [term])))
        if unasked := [t for t in terms if t not in asked]:
            more = vocabulary.term_stats(unasked)
            stats = TermStats(stats.notes, {**stats.docs, **more.docs}, {**stats.public, **more.public})
    terms += [p for p in functional if stats.docs.get(p, 0) > 0 and p not in terms]
    if len(terms) > MAX_QUERY_TERMS:
        # A pasted page: its rarest words that the vault holds carry the query (BM25 would
        # weigh the rest near zero), and a bounded query stays fast.
        held = sorted(terms, key=lambda t: (stats.docs.get(t, 0) == 0, stats.docs.get(t, 0)))
        kept = set(held[:MAX_QUERY_TERMS])
        terms = [t for t in terms if t in kept]
    stands_for: dict[str, tuple[str, ...]] = {}
    for joined, parts in joins.items():
        if stats.docs.get(joined, 0) > 0 and (kept_parts := tuple(p for p in parts if p in terms)):
            stands_for[joined] = kept_parts
    return Analysis([*terms, *stands_for], stats, stands_for)


def search_terms(query: str) -> list[str]:
    """A user query's terms, tokenized as the index was: its words, then its emoji (which
    titles are searched by)."""
    terms = tokenize.query_terms(query, stem=tokenize.STEM_ENGLISH)
    return [*terms, *(s for s in tokenize.symbols(query) if s not in terms)]


def prefix_terms(terms: Sequence[str]) -> frozenset[str]:
    """The query terms that also match longer tokens: ASCII words of ``MIN_PREFIX`` letters or
    more, and single CJK characters (indexed as the first half of a bigram, see ``cairn.tokenize``)."""
    return frozenset(
        t for t in terms if (t.isascii() and len(t) >= MIN_PREFIX) or (len(t) == 1 and tokenize.is_cjk(t))
    )
