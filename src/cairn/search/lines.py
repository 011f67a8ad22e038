"""Line granularity: the lines of the best candidate notes, each scored on its own words plus a
share of its note's score (``cairn.ranking``), best first."""

from __future__ import annotations

from collections.abc import Sequence

from .. import ranking
from ..filters import Filters
from ..index import Index
from ..models import Hit
from ..rows import Row
from . import candidates, hits
from .analysis import TermStats

LINE_CANDIDATE_NOTES = 30  # notes whose lines a line search ranks (at least)

# row, score, lines, its content lines (not headings), and their ``ranking.term_counts``
Candidate = tuple[Row, float, list[tuple[int, str]], list[tuple[int, str]], list[ranking.Counted | None]]
ScoredLine = tuple[float, Row, int, list[tuple[int, str]], str]  # score, row, line number, lines, text


def line_hits(
    index: Index, terms: Sequence[str], stats: TermStats, ranker: ranking.Query, filters: Filters, limit: int
) -> list[Hit]:
    """The best lines of the best notes: each line scored on its own words, plus a share of
    its note's score, and of a question's if it follows one (see ``ranking``). Headings are
    never line hits."""
    notes = candidates.search_notes(index, terms, filters, max(2 * limit, LINE_CANDIDATE_NOTES), stats)
    if not notes:
        return []
    all_lines = index.lines_of_many([row.id for row, _ in notes], include_sensitive=filters.include_sensitive)
    # Every line of a note counted once, here: ranking reads its content lines' counts, and
    # the hit (its coverage) all of them.
    counted = {row.id: ranking.term_counts([t for _, t in all_lines[row.id]], ranker) for row, _ in notes}
    found = []
    for row, note_score in notes:
        lines = all_lines[row.id]
        content = [i for i, (_, text) in enumerate(lines) if not ranking.is_heading(text)]
        found.append(
            (row, note_score, lines, [lines[i] for i in content], [counted[row.id][i] for i in content])
        )
    scored = score_lines(found, ranker)[:limit]
    details = hits.read_details(index, [row for _, row, *_ in scored], filters, lines=all_lines)
    per_note: dict[int, hits.HitExtras] = {}  # several lines, one note
    return [
        hits.hit(
            index,
            row,
            score,
            filters,
            line=n,
            lines=lines,
            counted=counted[row.id],
            ranker=ranker,
            cache=per_note,
            details=details,
        )
        for score, row, n, lines, _text in scored
    ]


def score_lines(candidates: Sequence[Candidate], ranker: ranking.Query) -> list[ScoredLine]:
    """Every content line near a match, best first (ties: newest note, permalink, line). A note
    found by its title, tags or permalink alone, with no such line, is shown by its first line."""
    texts = [[t for _, t in content] for *_, content, _ in candidates]
    counted = [note_counted for *_, note_counted in candidates]
    line_ranker = ranking.for_lines(ranker, counted)  # terms weighed among these lines too
    own_scores = [ranking.line_bm25(t, line_ranker, c) for t, c in zip(texts, counted, strict=True)]
    best_line = max((max(own, default=0.0) for own in own_scores), default=0.0) or 1.0
    best_note = max(score for _, score, *_ in candidates) or 1.0
    scored: list[ScoredLine] = []
    for (row, note_score, lines, content, _), note_texts, own in zip(
        candidates, texts, own_scores, strict=True
    ):
        blended = ranking.blend(note_texts, own, best_line * note_score / best_note)
        shown = ranking.near_a_match(own)
        if content and not any(shown):
            shown[0] = True
        for (n, text), score, ok in zip(content, blended, shown, strict=True):
            if ok:
                scored.append((score, row, n, lines, text))
    scored.sort(key=lambda item: (-item[0], -(item[1].modified_ts or 0.0), item[1].permalink, item[2]))
    return scored
