"""Pseudo-relevance feedback: measured in the ablations, not shipped in Cairn.

The shape of RM3 on Cairn's own parts: search once; take the words of the best hits' snippets
that the query lacks, each weighted by its share of those snippets' words and by its IDF in the
vault; search again with the best of them added to the query at a fraction of their weight.
An agent could do the same with two searches; this measures whether Cairn should.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock


@dataclasses.dataclass(frozen=True)
class Feedback:
    docs: int  # hits whose snippets feed back
    terms: int  # words added to the query
    share: float  # an added word's weight, as a share of its IDF


def patches(feedback: Feedback) -> tuple[tuple[object, str, object], ...]:
    """The ``(owner, attribute, value)`` patches that make ``Memory.search`` search twice."""
    from cairn import memory

    return ((memory.Memory, "search", _searching_twice(feedback)),)


def _searching_twice(feedback: Feedback) -> Callable[..., Any]:
    from cairn import memory, ranking, tokenize
    from cairn.search import analysis
    from cairn.search.vocabulary import IndexVocabulary

    search = memory.Memory.search
    analyse = analysis.analyse
    build = ranking.Query.build
    for_lines = ranking.for_lines

    def expansion(mem: Any, query: str, hits: list[Any]) -> list[str]:
        asked = set(analysis.search_terms(query))
        share: Counter[str] = Counter()
        for hit in hits[: feedback.docs]:
            # query_terms leaves out stopwords and Chinese function words, as for a query
            wanted = set(tokenize.query_terms(hit.snippet, stem=tokenize.STEM_ENGLISH)) - asked
            words = [t for t in tokenize.tokens(hit.snippet, stem=tokenize.STEM_ENGLISH) if t in wanted]
            for word, n in Counter(words).items():
                share[word] += n / len(words)
        stats = IndexVocabulary(mem._index).term_stats(list(share))
        weight = {
            t: s * ranking.idf(stats.notes, stats.docs[t]) for t, s in share.items() if stats.docs.get(t)
        }
        return sorted(weight, key=lambda t: (-weight[t], t))[: feedback.terms]

    @contextlib.contextmanager
    def expanded(added: list[str]) -> Iterator[None]:
        def with_added(query: str, vocabulary: Any) -> Any:
            terms, _, stands_for = analyse(query, vocabulary)
            terms = [*terms, *(t for t in added if t not in terms)]
            return analysis.Analysis(terms, vocabulary.term_stats(terms), stands_for)

        def scaled(query: Any) -> Any:
            weights = {t: w * feedback.share if t in added else w for t, w in query.weights.items()}
            return dataclasses.replace(query, weights=weights)

        def weighted(_cls: Any, *args: Any, **kwargs: Any) -> Any:
            return scaled(build(*args, **kwargs))

        def weighted_for_lines(query: Any, counted: Any) -> Any:
            # the lines' own IDF is blended in at full weight: scale the blend, not one half of it
            whole = {t: w / feedback.share if t in added else w for t, w in query.weights.items()}
            return scaled(for_lines(dataclasses.replace(query, weights=whole), counted))

        with (
            mock.patch.object(analysis, "analyse", with_added),
            mock.patch.object(ranking.Query, "build", classmethod(weighted)),
            mock.patch.object(ranking, "for_lines", weighted_for_lines),
        ):
            yield

    def search_twice(mem: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        first = search(mem, query, *args, **kwargs)
        added = expansion(mem, query, first) if query.strip() else []
        if not added:
            return first
        with expanded(added):
            return search(mem, query, *args, **kwargs)

    return search_twice
