"""What each keyword technique adds: Cairn with one of them switched off at a time, then with
techniques it does not ship (pseudo-relevance feedback, the neighbour share it once shipped)
switched on.

Every row is measured in the same run on LoCoMo (line hits, every question with evidence) and on
the memory sets (note hits), so a technique that helps one data set and hurts the others
shows as such. The switches are the product's own module constants and functions, set for one
row and put back after it; Cairn itself has no such options.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import feedback, heldout, locomo, memory_sets
from .common import md_table


@dataclass(frozen=True)
class Ablation:
    label: str
    patches: tuple[tuple[object, str, object], ...]  # (module, attribute, value for this row)


# Pseudo-relevance feedback as RM3 is usually run (10 documents, 10 words, an interpolation of
# 0.5), and lighter: line hits are short, and the best few carry the question's topic.
FEEDBACK = (feedback.Feedback(10, 10, 0.5), feedback.Feedback(3, 5, 0.3))


NEIGHBOUR_SHARE = 0.3  # the share of its best neighbour's score that every line took before


def _blend_with_neighbours(ranking: Any) -> Callable[..., list[float]]:
    """``ranking.blend`` as it was: each line also took ``NEIGHBOUR_SHARE`` of its best
    neighbour's own score, and the line after a question the larger of that and its answer share."""
    blend = ranking.blend

    def blended(lines: Sequence[str], line_scores: Sequence[float], note_share: float) -> list[float]:
        with_answers = blend(lines, line_scores, 0.0)  # each line's own score and answer share
        out = []
        for i, (own, answered) in enumerate(zip(line_scores, with_answers, strict=True)):
            before = line_scores[i - 1] if i else 0.0
            after = line_scores[i + 1] if i + 1 < len(line_scores) else 0.0
            neighbour = max(answered - own, NEIGHBOUR_SHARE * max(before, after))
            out.append(own + neighbour + ranking.NOTE_SHARE * note_share)
        return out

    return blended


def ablations() -> tuple[Ablation, ...]:
    """The rows, Cairn as shipped first (imported here: the baselines run without Cairn)."""
    from cairn import dates, english, ranking, tokenize
    from cairn.search import analysis, candidates, linked, run

    return (
        Ablation("as shipped", ()),
        Ablation(
            "a question that asks two things searched whole (no parts)",
            ((run, "question_parts", lambda query: [query]),),
        ),
        Ablation("Chinese function pairs left out of queries", ((analysis, "FUNCTION_PAIRS_BY_IDF", False),)),
        Ablation("CJK seams kept in queries", ((tokenize, "seams", lambda runs, known, asked: set()),)),
        Ablation(
            "no compounds (hyphenated words indexed written together, a query's adjacent words joined)",
            (
                (tokenize, "compounds", lambda text, *, stem=False, folded=False: []),
                (tokenize, "query_compounds", lambda text, *, stem=False: {}),
            ),
        ),
        Ablation(
            "English word forms not made one first (irregular forms: went/go; clipped forms: appt; British spellings)",
            ((english, "base_form", lambda word: word),),
        ),
        Ablation(
            "no word of letters and digits asked as its parts (iphone15: iphone 15)",
            ((tokenize, "letter_digit_parts", lambda term, *, stem=False: []),),
        ),
        Ablation(
            "no plural acronym read as its singular (VMs: vm)",
            (
                (tokenize, "acronym_singulars", lambda text, *, stem=False: []),
                (tokenize, "_singular_acronyms", lambda text: text),
            ),
        ),
        Ablation(
            "dates not read as months (2026-10-14, 10月14日 and Oct 14 meet October only as written)",
            ((dates, "month_words", lambda text: []), (dates, "as_asked", lambda text: text)),
        ),
        Ablation(
            "equal field weights (title = permalink = tags = body)",
            ((candidates, "_WEIGHTS", "1, 1, 1, 1, 1"),),
        ),
        Ablation(
            "no link share (relation expansion: a linked note gains only where the query names the link's type)",
            ((linked, "LINK_SHARE", 0.0),),
        ),
        Ablation("lines: no share of the note's score (session context)", ((ranking, "NOTE_SHARE", 0.0),)),
        Ablation(
            "lines: no answer share (the line after a question takes none of its score)",
            ((ranking, "ANSWER_SHARE", 0.0),),
        ),
        Ablation("lines: no coordination (plain BM25 per line)", ((ranking, "COORDINATION", 0.0),)),
        Ablation(
            "lines: coordination over the line alone, not with the lines beside it",
            ((ranking, "COORDINATION_REACH", 0),),
        ),
        Ablation("lines: vault-wide IDF only", ((ranking, "LINE_IDF_SHARE", 0.0),)),
        Ablation("lines: BM25's usual k1 1.2 / b 0.75", ((ranking, "K1", 1.2), (ranking, "B", 0.75))),
        Ablation(
            f"added, not shipped: every line takes {NEIGHBOUR_SHARE:g} of its best neighbour's score"
            " (shipped until 2 December)",
            ((ranking, "blend", _blend_with_neighbours(ranking)),),
        ),
        *(
            Ablation(
                f"added, not shipped: pseudo-relevance feedback ({f.docs} hits, {f.terms} words"
                f" at {f.share:g} of their weight)",
                feedback.patches(f),
            )
            for f in FEEDBACK
        ),
    )


@contextlib.contextmanager
def applied(ablation: Ablation) -> Iterator[None]:
    from cairn import tokenize

    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in ablation.patches]
    try:
        for owner, name, value in ablation.patches:
            setattr(owner, name, value)
        tokenize._stem.cache_clear()  # stems made before the switch would outlive it
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
        tokenize._stem.cache_clear()


def _locomo(convs: list[locomo.Conversation], workdir: Path) -> list[str]:
    scores = locomo.evaluate("", convs, locomo.cairn_factory(workdir, {}))
    return [f"{scores.overall[5]:.3f}", f"{scores.overall[10]:.3f}"] + [
        f"{scores.by_cat[c][5]:.3f}" for c in locomo.CATEGORIES
    ]


def _sets(
    sets: dict[str, tuple[list[memory_sets.SetNote], list[memory_sets.SetQuery]]], workdir: Path
) -> list[str]:
    cells = []
    for key, (notes, queries) in sets.items():
        folder = workdir / key
        folder.mkdir()
        search = memory_sets.cairn_searcher(notes, folder)
        scores = memory_sets.evaluate("", queries, search)
        quiet, none, confident, answerable = memory_sets.bar_counts(queries, search.coverage)  # type: ignore[attr-defined]
        cells.append(
            f"{scores.overall[0]:.3f} / {scores.overall[1]:.3f}; {quiet}/{none}, {confident}/{answerable}"
        )
    return cells


def heldout_ablations() -> tuple[Ablation, ...]:
    """The rows run on the held-out sets: each special case of ranking the issue names (and the two
    it asked for), as shipped first and last (their two readings are the run-to-run spread)."""

    rows = {row.label: row for row in ablations()}
    wanted = [
        "as shipped",
        "a question that asks two things searched whole (no parts)",
        "Chinese function pairs left out of queries",
        "CJK seams kept in queries",
        "lines: no share of the note's score (session context)",
        "lines: no answer share (the line after a question takes none of its score)",
        "lines: no coordination (plain BM25 per line)",
        "lines: coordination over the line alone, not with the lines beside it",
        "lines: vault-wide IDF only",
        "lines: BM25's usual k1 1.2 / b 0.75",
    ]
    return (
        *(rows[label] for label in wanted),
        Ablation("as shipped (again: the run-to-run spread)", ()),
    )


def run_heldout(half: str = "held-out", workdir: Path | None = None) -> str:
    """Each row of ``heldout_ablations`` on one half of both held-out sets: R@5 / MRR / top hit
    above the relevance bar, per language, layout and granularity."""
    users = {language: heldout.load(language, half) for language in ("zh", "en")}
    keys = [
        (lang, layout, gran) for lang in users for layout in heldout.LAYOUTS for gran in heldout.GRANULARITIES
    ]
    rows = []
    for ablation in heldout_ablations():
        with applied(ablation), tempfile.TemporaryDirectory(prefix="cairn-ablation-", dir=workdir) as tmp:
            scores = {lang: heldout.cairn_scores(users[lang], Path(tmp) / lang) for lang in users}
        cells = []
        for lang, layout, gran in keys:
            per = scores[lang][layout, gran].per_question.values()
            cells.append(" / ".join(f"{sum(p[i] for p in per) / len(per):.3f}" for i in (0, 2, 4)))
        rows.append([ablation.label, *cells])
        print(f"[ablations] {half}: {ablation.label}", flush=True)
    questions = {lang: sum(len(u.questions) for u in users[lang]) for lang in users}
    return "\n".join(
        [
            f"## Ablations on the held-out sets ({half} half: {', '.join(f'{lang} {len(users[lang])} users, {questions[lang]} questions' for lang in users)})",
            "",
            "R@5 / MRR of the evidence messages / share of questions whose top hit is above the relevance bar; a vault per user and layout (day: a note per day, a line per "
            "message; message: a note per message), line and note hits.",
            "",
            md_table(["row", *(f"{lang} {gran} ({layout})" for lang, layout, gran in keys)], rows),
            "",
        ]
    )


def run(workdir: Path | None = None, rows: tuple[Ablation, ...] | None = None) -> str:
    """LoCoMo and every memory set for each row of ``ablations`` (or of ``rows``)."""
    convs = locomo.load()
    sets = {key: memory_sets.load(spec.path) for key, spec in memory_sets.SETS.items()}
    locomo_rows, set_rows = [], []
    for ablation in rows or ablations():
        with applied(ablation), tempfile.TemporaryDirectory(prefix="cairn-ablation-", dir=workdir) as tmp:
            locomo_rows.append([ablation.label, *_locomo(convs, Path(tmp))])
            set_rows.append([ablation.label, *_sets(sets, Path(tmp))])
    categories = [f"{c} {name} R@5" for c, name in locomo.CATEGORIES.items()]
    return "\n".join(
        [
            "## Ablations: each keyword technique switched off in turn, and techniques not shipped",
            "",
            "LoCoMo, line hits (the agent-natural layout of the LoCoMo section):",
            "",
            md_table(["row", "R@5", "R@10", *categories], locomo_rows),
            "",
            f"Memory sets, note hits: R@5 / MRR; then the relevance bar (`coverage` >= {memory_sets.COVERAGE_BAR}): no-answer "
            "queries with no hit above it, and answerable queries whose top hit is above it.",
            "",
            md_table(["row", *(spec.heading for spec in memory_sets.SETS.values())], set_rows),
            "",
            "- Each row changes one thing against the first, which is Cairn as shipped; every row builds "
            "its vaults afresh, so a switch that changes indexing (stemming) takes effect there too.",
            "- Pseudo-relevance feedback searches twice: the words of the first search's best hits' snippets "
            "that the query lacks, weighed by their share of those words and their IDF in the vault, are "
            "added to the query at a fraction of their weight (RM3's shape; `benchmarks/feedback.py`).",
            "- The link share matters only where notes link to each other: LoCoMo's session notes have no "
            "relations, the memory sets' notes do. The line rows change line hits only, so not the memory sets.",
        ]
    )
