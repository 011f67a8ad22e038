"""Keyword baselines over a list of documents: rank_bm25 BM25Okapi and plain SQLite FTS5.

Both take the same query tokens (``common.tokenize`` unless a tokenizer is given), so the only
difference between them is the index and the scoring. ``PlainBigrams`` is the bar every Cairn
figure is set beside (issue 37): FTS5's own ``bm25()`` over text split into CJK character bigrams
and words, nothing else.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable, Sequence

from rank_bm25 import BM25Okapi

from .common import tokenize

Tokenizer = Callable[[str], list[str]]


class BM25Baseline:
    name = "rank_bm25 BM25Okapi"

    def __init__(self, docs: Sequence[str], tokenizer: Tokenizer = tokenize) -> None:
        self._tok = tokenizer
        corpus = [tokenizer(d) for d in docs]
        # BM25Okapi divides by the mean document length: keep it defined for empty corpora.
        self._bm25 = BM25Okapi([c or [""] for c in corpus])

    def search(self, query: str, k: int) -> list[int]:
        terms = self._tok(query)
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [i for i in order[:k] if scores[i] > 0]


class FTS5Baseline:
    """An in-memory FTS5 table, one row per document; OR query of quoted terms, ranked by bm25()."""

    def __init__(
        self, docs: Sequence[str], tokenize_spec: str = "unicode61", tokenizer: Tokenizer = tokenize
    ) -> None:
        self.name = f"SQLite FTS5 `{tokenize_spec}`"
        self._tok = tokenizer
        self._db = sqlite3.connect(":memory:")
        self._db.execute(f"CREATE VIRTUAL TABLE d USING fts5(body, tokenize={_sql_str(tokenize_spec)})")
        self._db.executemany(
            "INSERT INTO d(rowid, body) VALUES (?, ?)", ((i + 1, t) for i, t in enumerate(docs))
        )

    def search(self, query: str, k: int) -> list[int]:
        terms = list(dict.fromkeys(self._tok(query)))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self._db.execute(
            "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d), rowid LIMIT ?", (match, k)
        ).fetchall()
        return [r[0] - 1 for r in rows]

    def close(self) -> None:
        self._db.close()


# CJK runs (Han, kana, Hangul) and runs of other letters and digits.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff"
_RUN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


def bigrams(text: str) -> list[str]:
    """The plainest tokens that work for Chinese: each CJK run as its adjacent character pairs (a
    run of one character as itself), each other run of letters and digits as one lower-cased word
    (NFKC first, so full-width letters are letters). No stemming, no stop words, no folding of
    Traditional characters."""
    tokens: list[str] = []
    for cjk, word in _RUN.findall(unicodedata.normalize("NFKC", text).lower()):
        if word:
            tokens.append(word)
        elif len(cjk) == 1:
            tokens.append(cjk)
        else:
            tokens += [cjk[i : i + 2] for i in range(len(cjk) - 1)]
    return tokens


class PlainBigrams(FTS5Baseline):
    """FTS5 BM25 (``bm25()``, k1 1.2, b 0.75) over documents tokenized by ``bigrams`` beforehand
    and stored space-joined, read back whole by ``unicode61``; the query is the OR of its own
    ``bigrams``. What a user gets from SQLite with one line of pre-tokenizing."""

    def __init__(self, docs: Sequence[str]) -> None:
        super().__init__([" ".join(bigrams(d)) for d in docs], "unicode61 remove_diacritics 0", bigrams)
        self.name = "plain bigram BM25"


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
