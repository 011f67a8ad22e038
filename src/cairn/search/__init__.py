"""Search, one way down; each stage is a module, and ``Memory.search`` calls them in this order:

1. ``parts`` and ``run``: a question that asks several things is also searched part by part;
   ``analysis``: the query's text as terms (folding, stemming, CJK pairs, dates, compounds), the vault's vocabulary reached through the ``Vocabulary`` handed in
   (``vocabulary.IndexVocabulary`` over the index), never by calling the index itself;
2. ``candidates``: the index finds the notes holding those terms and scores them (FTS5 BM25);
3. ``linked`` lifts the notes linked to the best of them, ``lines`` ranks lines within them
   (both order with ``cairn.ranking``), and ``current`` puts replacements before what they
   supersede and disagreeing claims together;
4. ``hits``: the hits are built last, with their snippets, links and coverage.
"""
