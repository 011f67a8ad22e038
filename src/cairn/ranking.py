"""Ranking the lines inside notes that FTS5 has already ranked.

Search is two-staged: FTS5 ranks whole notes (BM25 over title, permalink, tags and body), then
the lines of the best notes are scored here with BM25 over single lines. A line's score also
takes in a share of its note's score (what the whole note says about the query: its title,
date, tags), and the line after a question a share of the question's (see below).

Term weights for lines blend the vault-wide IDF (over notes) with an IDF over the lines being
ranked (``for_lines``): a word in every note can still pick out one line in ten, and a word
repeated on every line of one note says little about which of its lines answers. A line's BM25
is then scaled by the share of the query's weight it holds with the lines beside it
(``COORDINATION``, ``COORDINATION_REACH``): one line that says two of the things asked beats one
that says a single thing twice, and a reply that names one thing asked, right after the line
that names the other, holds both as the reader sees them. The
line after a question (``asks``) takes all of the question's score as well as its own
(``ANSWER_SHARE``): it is most likely the answer, and answers seldom repeat the words asked.
Other lines take nothing of their neighbours' scores: a neighbour's words already count toward
a line's share of the query, and a hit's snippet shows the lines on either side, so a line
lifted by its neighbour alone would be a second hit showing what the first one shows.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from . import tokenize

# Lines are short and similar in length: term frequency saturates early and length matters less
# than in whole documents. (benchmarks/results/ablations.md, row "lines: BM25's usual k1 1.2 / b 0.75")
K1 = 0.9
B = 0.3
# Weight of the IDF over the ranked lines, against the vault-wide IDF over notes.
# (benchmarks/results/ablations.md, row "lines: vault-wide IDF only")
LINE_IDF_SHARE = 0.75
# Exponent on the share of the query's weight a line holds (0: plain BM25).
# (benchmarks/results/ablations.md, row "lines: no coordination (plain BM25 per line)")
COORDINATION = 1.0
# Lines on either side whose words count toward that share: as many as a hit's snippet shows. A
# line read alone drops what its neighbours say of the same thing ("Which authors has Tim read?":
# "I'm reading a book" then "It's by Patrick Rothfuss"). (benchmarks/results/ablations.md, row
# "lines: coordination over the line alone, not with the lines beside it")
COORDINATION_REACH = 1
# Weight of the note's (normalised) score in each of its lines' scores: what the whole note says
# of the query (its title, date, tags). (benchmarks/results/ablations.md, row "lines: no share of
# the note's score (session context)")
NOTE_SHARE = 0.7
# The share of a question's own score that the line after it takes. A reply says "mostly chess"
# to "which games do you play?": read together, the two are one answer. (benchmarks/results/
# ablations.md, row "lines: no answer share (the line after a question takes none of its score)")
ANSWER_SHARE = 1.0
# What ``asks`` reads at a line's end.
_QUESTION_MARKS = "?？"
_CLOSING_QUOTES = "\"'”’」』"
_BRACKETS = {")": "(", "）": "（"}


@dataclass(frozen=True)
class Query:
    """A query's terms with their weights; ``prefixes`` also match longer words. ``stands_for``:
    words written together among the terms (``wifi`` for ``wi fi``), each with the terms it is
    written apart as (a text holding it holds them all, and its own weight is not asked for
    beside them)."""

    terms: tuple[str, ...]
    weights: Mapping[str, float]
    prefixes: frozenset[str]
    stands_for: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def probes(self) -> tuple[str, ...]:
        """Substrings a line must contain to possibly hold a term: a stem may have lost or
        changed its last letter (``studi`` from ``study``), so English terms drop theirs, and a
        word may be written in a form that holds no part of its stem (``teeth`` for ``tooth``,
        ``appt`` for ``appoint``: ``tokenize.written_forms``)."""
        trimmed = (t[:-1] if t.isascii() and len(t) > 3 else t for t in self.terms)
        return tuple(dict.fromkeys([*trimmed, *(f for t in self.terms for f in tokenize.written_forms(t))]))

    @cached_property
    def shorter(self) -> dict[str, str]:
        """Terms that also count as a shorter stem (``tokenize.stem_without_i``)."""
        return {t: short for t in self.terms if (short := tokenize.stem_without_i(t))}

    @cached_property
    def compound_like(self) -> frozenset[str]:
        """Terms that a text may hold only hyphenated (``tokenize.compounds``): English words."""
        return frozenset(t for t in self.terms if t.isascii() and t[:1].isalpha())

    @cached_property
    def singular_like(self) -> frozenset[str]:
        """Terms that a text may hold only as a plural acronym (``tokenize.acronym_singulars``)."""
        return frozenset(t for t in self.terms if 2 <= len(t) <= 6 and t.isascii() and t.isalnum())

    @cached_property
    def month_like(self) -> frozenset[str]:
        """Terms that a text may hold only through a date (``tokenize.months``)."""
        return tokenize.MONTH_TERMS.intersection(self.terms)

    @cached_property
    def asked_weight(self) -> float:
        """The weight of what the query asks for: its terms, a joined word counted through its parts."""
        return sum(self.weights[t] for t in self.terms if t not in self.stands_for)

    def held_weight(self, found: set[str]) -> float:
        """The part of ``asked_weight`` that a text holding the terms ``found`` holds."""
        for joined in self.stands_for.keys() & found:
            found = found | set(self.stands_for[joined])
        return sum(self.weights[t] for t in self.terms if t in found and t not in self.stands_for)

    @classmethod
    def build(
        cls,
        terms: Sequence[str],
        total: int,
        df: Mapping[str, int],
        prefixes: frozenset[str],
        stands_for: Mapping[str, tuple[str, ...]] | None = None,
    ) -> Query:
        return cls(tuple(terms), {t: idf(total, df.get(t, 0)) for t in terms}, prefixes, stands_for or {})


class Counted(NamedTuple):
    """What ranking needs of a text that may hold a query term (``term_counts``): how often it
    holds each term it holds, and how many tokens it has."""

    tf: dict[str, int]
    length: int


def for_lines(query: Query, counted: Iterable[Sequence[Counted | None]]) -> Query:
    """``query`` re-weighted to rank the lines counted (``term_counts`` of each candidate note).

    Each weight blends the vault-wide IDF with the IDF over these lines, so the work grows with
    the candidate lines only, never with the vault.
    """
    lines = 0
    df: Counter[str] = Counter()
    for note in counted:
        lines += len(note)
        for counts in note:
            if counts:
                df.update(counts.tf.keys())
    if not lines:
        return query
    weights = {
        t: LINE_IDF_SHARE * idf(lines, df[t]) + (1 - LINE_IDF_SHARE) * query.weights[t] for t in query.terms
    }
    return Query(query.terms, weights, query.prefixes, query.stands_for)


def idf(total: int, df: int) -> float:
    """BM25's inverse document frequency, kept positive for terms in most documents."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def is_heading(text: str) -> bool:
    return text.startswith("#")


def term_counts(texts: Sequence[str], query: Query) -> list[Counted | None]:
    """The query terms each text holds, counted once here for every later use (None for a text
    that cannot hold one).

    A cheap substring test comes first: most lines hold none of the terms.
    """
    # Folded as the index folds (accents too), so "naïve" holds the probe of "naive"; all at once,
    # since folding never adds or removes a line break.
    stem = tokenize.STEM_ENGLISH
    joined = "\n".join(texts)
    whole = tokenize.fold(joined)
    folded = whole.split("\n") if texts else []
    if len(folded) != len(texts):  # a text with a line break of its own
        folded = [tokenize.fold(text) for text in texts]
        whole = "\n".join(folded)
    counted: list[Counter[str] | None] = [None] * len(folded)
    for i in _holding_a_probe(whole, folded, query.probes):
        counted[i] = Counter(tokenize.tokens(folded[i], stem=stem, folded=True))

    def add(found: Iterable[list[str]]) -> None:
        for i, named in enumerate(found):
            if named:
                counts = counted[i] or Counter(tokenize.tokens(folded[i], stem=stem, folded=True))
                counts.update(named)
                counted[i] = counts

    # A plural acronym holds its singular (``vm`` in ``VMs``), a hyphenated word itself written
    # together (``wifi`` in ``Wi-Fi``) and a date its month (``october`` in ``2026-10-14``), as the
    # index holds them; one search of the whole note first spares most notes the look at each line.
    # Plural acronyms are made of capital letters, which folding changes: a note that folding
    # leaves as it is (most Chinese notes) holds none, and is spared the scan.
    capitals = whole != joined
    if (wanted := query.compound_like) and not wanted.isdisjoint(
        tokenize.compounds(whole, stem=stem, folded=True)
    ):
        add([c for c in tokenize.compounds(text, stem=stem, folded=True) if c in wanted] for text in folded)
    if (
        (wanted := query.singular_like)
        and capitals
        and not wanted.isdisjoint(tokenize.acronym_singulars(joined, stem=stem))
    ):
        add([a for a in tokenize.acronym_singulars(text, stem=stem) if a in wanted] for text in texts)
    if (wanted := query.month_like) and not wanted.isdisjoint(tokenize.months(whole, stem=stem)):
        add([m for m in tokenize.months(text, stem=stem) if m in wanted] for text in folded)
    return [
        _counted(counts, query, text) if counts is not None else None
        for counts, text in zip(counted, folded, strict=True)
    ]


def _holding_a_probe(whole: str, folded: Sequence[str], probes: Sequence[str]) -> list[int]:
    """The indexes of the ``folded`` texts that hold one of ``probes``, in order. ``whole``:
    ``folded`` joined by line breaks. Searched in ``whole``, a probe at a time: a search of the
    whole note is one fast scan, where a test of each text for each probe costs a call each, and
    most texts hold none. A probe holds no line break, so it is never found across two texts."""
    starts = list(itertools.accumulate((len(text) + 1 for text in folded), initial=0))
    holding: set[int] = set()
    for probe in probes:
        at = whole.find(probe)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            holding.add(i)
            at = whole.find(probe, starts[i + 1])  # the next text that holds it
    return sorted(holding)


def _counted(counts: Counter[str], query: Query, folded: str) -> Counted:
    tf: dict[str, int] = {}
    for term in query.terms:
        n = counts.get(term, 0)
        # An English word falls back to longer words only when it is not there itself; a CJK
        # character is always counted through the bigrams it starts (see ``cairn.tokenize``).
        # The tokens that start with it are summed only then: mostly the word is there.
        if term in query.prefixes and (not n or len(term) == 1):
            n = sum(k for token, k in counts.items() if token.startswith(term))
        if not n and term in query.shorter:
            n = counts.get(query.shorter[term], 0)
        if n:
            tf[term] = n
    return Counted(tf, sum(counts.values()))


def line_bm25(
    lines: Sequence[str], query: Query, counted: Sequence[Counted | None] | None = None
) -> list[float]:
    """BM25 of each line as its own document, with line lengths averaged over ``lines``.

    ``counted`` is ``term_counts(lines, query)`` when the caller already has it.
    """
    if not lines or not query.terms:
        return [0.0] * len(lines)
    if counted is None:
        counted = term_counts(lines, query)
    lengths = [
        c.length if c and c.length else max(1, len(text) // 4) for c, text in zip(counted, lines, strict=True)
    ]
    average = sum(lengths) / len(lengths)
    total_weight = query.asked_weight or 1.0
    scores = []
    for i, (counts, length) in enumerate(zip(counted, lengths, strict=True)):
        score = 0.0
        if counts and counts.tf:
            norm = K1 * (1 - B + B * length / average)
            for term in query.terms:  # in query order: a sum's last bit depends on it
                if tf := counts.tf.get(term, 0):
                    score += query.weights[term] * tf * (K1 + 1) / (tf + norm)
        if score:
            held = query.held_weight(_terms_near(counted, i))
            score *= min(1.0, held / total_weight) ** COORDINATION
        scores.append(score)
    return scores


def _terms_near(counted: Sequence[Counted | None], i: int) -> set[str]:
    """The query terms held by line ``i`` and the ``COORDINATION_REACH`` lines on either side."""
    found: set[str] = set()
    for counts in counted[max(0, i - COORDINATION_REACH) : i + COORDINATION_REACH + 1]:
        if counts:
            found.update(counts.tf)
    return found


def coverage(counted: Iterable[Counted | None], query: Query) -> float:
    """The share of the query's weight found in texts counted by ``term_counts`` (1.0: all).

    A relevance bar that BM25 scores cannot give: they have no fixed scale, but a hit that holds
    only a third of what was asked for is a weak hit whatever its rank.
    """
    total = query.asked_weight
    if not total:
        return 1.0
    found = {t for counts in counted if counts for t in counts.tf}
    # Summed in query order (a set's order changes from run to run, and so would the last bit).
    return min(1.0, query.held_weight(found) / total)


def asks(line: str) -> bool:
    """Whether a line asks a question: its text ends in a question mark, before any closing
    quotes, trailing ``#tags`` and bracketed asides. Looser than the parser's one ``(context)``:
    ``Really? (shares a photo) (D2:1)`` still asks.

    Read back from the end, one piece at a time, by index: a pattern anchored at the end is tried
    from every question mark, and a line of many (``? #? #? #...``) took it seconds.
    """
    if not any(mark in line for mark in _QUESTION_MARKS):
        return False
    end = len(line)  # line[:end] is what is left to read
    while True:
        while end and line[end - 1].isspace():
            end -= 1
        if not end:
            return False
        last = line[end - 1]
        if last in _QUESTION_MARKS:
            return True
        if last in _CLOSING_QUOTES:
            end -= 1
        elif last in _BRACKETS:
            end = line.rfind(_BRACKETS[last], 0, end)
            if end < 0:
                return False
        else:  # a trailing #tag, or the end of the text
            start = line.rfind(" ", 0, end) + 1
            if not (start and end - start > 1 and line[start] == "#"):
                return False
            end = start


def blend(lines: Sequence[str], line_scores: Sequence[float], note_share: float) -> list[float]:
    """Each line's own score, plus a share of its note's; the line after a question takes
    ``ANSWER_SHARE`` of the question's, unless it heads the next section."""
    blended = []
    for i, own in enumerate(line_scores):
        answer = 0.0
        if i and (before := line_scores[i - 1]) and asks(lines[i - 1]) and not is_heading(lines[i]):
            answer = ANSWER_SHARE * before
        blended.append(own + answer + NOTE_SHARE * note_share)
    return blended


def near_a_match(line_scores: Sequence[float]) -> list[bool]:
    """Lines that match, or sit next to a line that does: the ones a line search may return."""
    n = len(line_scores)
    return [
        line_scores[i] > 0 or (i > 0 and line_scores[i - 1] > 0) or (i + 1 < n and line_scores[i + 1] > 0)
        for i in range(n)
    ]
