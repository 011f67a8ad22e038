"""The vault's vocabulary as the index counts it: the ``analysis.Vocabulary`` that search hands in."""

from __future__ import annotations

from collections.abc import Sequence

from .. import tokenize
from ..index import Index, _chunks, _marks
from .analysis import TermStats


class IndexVocabulary:
    """Term counts and names, read from the index's ``term_df`` and FTS5 tables."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def term_stats(self, terms: Sequence[str]) -> TermStats:
        """How many notes there are and how many hold each term: for weighting the terms, and for
        leaving out of a search those with no weight."""
        notes = self.index.db.execute("SELECT count(*) FROM notes_fts_docsize").fetchone()[0]
        docs: dict[str, int] = {}
        public: dict[str, int] = {}
        for chunk in _chunks(terms):
            for term, held, private in self.index.db.execute(
                f"SELECT term, docs, private FROM term_df WHERE term IN ({_marks(chunk)})", chunk
            ):
                docs[term], public[term] = held, held - private
        for term in terms:
            if len(term) == 1 and tokenize.is_cjk(term):
                # A character is spread over every bigram it starts: count the notes, not a token.
                docs[term] = self.index.db.execute(
                    "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", (f'"{term}"*',)
                ).fetchone()[0]
        return TermStats(notes, docs, public)
