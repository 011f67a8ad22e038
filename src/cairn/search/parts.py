"""A question that asks two things, as its parts: "我的手机是什么牌子？另外，表姐喜欢吃什么？" asks
for a phone and for a cousin's taste, and one ranking of all its words lets whichever part has
more (or rarer) words fill the first hits. Search ranks each part on its own and takes their
hits in turn (``run``), so the best evidence of each is near the top.

A part is cut where the question itself says one thing ends: after a question mark, or before a
word that adds another thing asked (另外, 还有, 以及, 此外, "and also"). Only parts that ask
count: a statement ("我下周出差。") is context for the question after it, not a thing asked, and
a question with fewer than two parts that ask is searched whole.
"""

from __future__ import annotations

import re

from .. import tokenize

# Words that start another thing asked. 以及, 此外 and "and also" say so wherever they stand;
# 另外 ("another"), 还有 ("still have") and "also" only at the start of a clause.
_ANYWHERE = ("以及", "此外", "and also")
_AT_A_CLAUSE = ("另外", "还有", "also")
_ENDS = "?？!！。;；"
_CLAUSE = ",，、:：" + _ENDS
_SEAM_RE = re.compile(
    "|".join(
        [
            *(re.escape(w) for w in _ANYWHERE),
            *(rf"(?:^|(?<=[{re.escape(_CLAUSE)}]))\s*{re.escape(w)}\b" for w in _AT_A_CLAUSE if w.isascii()),
            *(rf"(?:^|(?<=[{re.escape(_CLAUSE)}]))\s*{w}" for w in _AT_A_CLAUSE if not w.isascii()),
        ]
    ),
    re.IGNORECASE,
)
_SENTENCE_RE = re.compile(rf"[^{re.escape(_ENDS)}]+[{re.escape(_ENDS)}]*")
MAX_PARTS = 4  # more is a pasted text, not a question


def question_parts(query: str) -> list[str]:
    """The parts of ``query`` that each ask something, in order; ``[query]`` when it asks one
    thing (or more than ``MAX_PARTS``). A part holds a word that is not a stopword or particle
    (``tokenize.has_content``); a statement is joined to the question after it."""
    if len(query) > 400 or ("?" not in query and "？" not in query and not _SEAM_RE.search(query)):
        return [query]
    parts: list[str] = []
    context = ""
    for sentence in _SENTENCE_RE.findall(query):
        if not (sentence.rstrip().endswith(("?", "？")) or _SEAM_RE.match(sentence)):
            context += sentence
            continue
        for piece in _SEAM_RE.split(sentence):
            if tokenize.has_content(piece):
                parts.append(context + piece)
                context = ""
            elif parts:
                parts[-1] += piece
            else:
                context += piece
    if context and parts:
        parts[-1] += context
    if not 2 <= len(parts) <= MAX_PARTS:
        return [query]
    return [p.strip(" ，,、:：") for p in parts]
