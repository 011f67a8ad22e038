"""Memory sets written by hand, Chinese (``data/zh_memory.json``) and English
(``data/en_memory.json``), each with a validation set written later by someone else
(``data/*_validation.json``): Cairn beside plain FTS5 baselines.

Notes are written through ``Memory.write`` exactly as an agent would; queries go through
``Memory.search`` (note granularity) with their tag/type filters. The baselines index the same
notes (title, tags, observations, relations as one document) and apply the same filters by
restricting the candidate notes. Reported: recall@5 and MRR per query kind, and for the queries
that have no answer, how many come back empty.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .baselines import FTS5Baseline, PlainBigrams
from .common import a_minute_apart, md_table, mean, plain_bar, recall_at, reciprocal_rank

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Baselines:
    """The FTS5 tokenizers a set's language is compared with, and what the report says of them."""

    tokenizers: tuple[str, ...]
    note: str


CHINESE = Baselines(
    ("unicode61", "trigram"),
    "`unicode61` keeps a run of Chinese characters as one token; `trigram` cannot match terms shorter than "
    "3 characters.",
)
ENGLISH = Baselines(
    ("unicode61", "porter unicode61"),
    "`porter unicode61` stems English words (Porter) as FTS5 offers out of the box.",
)


@dataclass(frozen=True)
class MemorySet:
    """One set: its data file, the report's heading, and its baselines."""

    heading: str
    path: Path
    baselines: Baselines


SETS = {
    "zh": MemorySet("Chinese memory set", DATA / "zh_memory.json", CHINESE),
    "en": MemorySet("English memory set", DATA / "en_memory.json", ENGLISH),
    # Written by someone who saw neither the sets above nor the code: whether what was tuned on
    # those holds on notes and queries written apart from them.
    "zh-check": MemorySet(
        "Chinese validation set (written apart from the code and the first sets)",
        DATA / "zh_validation.json",
        CHINESE,
    ),
    "en-check": MemorySet(
        "English validation set (written apart from the code and the first sets)",
        DATA / "en_validation.json",
        ENGLISH,
    ),
    # A second pair, written the same way later on. Its English abbreviation queries, whose other
    # form is in no note, found 1 of 12 at first; acronym matching was built after that run.
    "zh-check2": MemorySet(
        "Chinese validation set 2 (written apart from the code and the other sets)",
        DATA / "zh_validation2.json",
        CHINESE,
    ),
    "en-check2": MemorySet(
        "English validation set 2 (written apart from the code and the other sets; acronym matching came after its first run)",
        DATA / "en_validation2.json",
        ENGLISH,
    ),
    # Written after Chinese function words (已经, 一般, 哪个) left queries, to try that change on
    # questions no one here had seen: it moved answerable queries above the relevance bar from
    # 39 to 44 of 68, R@5 0.959 and no-answer 9/11 unchanged, MRR 0.866 to 0.859. Abbreviations of
    # Chinese names came after, measured on it among the others (47 of 68, MRR 0.886).
    "zh-check3": MemorySet(
        "Chinese validation set 3 (written apart from the code and the other sets, after the function-word change)",
        DATA / "zh_validation3.json",
        CHINESE,
    ),
    # A third pair (a restaurant owner in Chengdu, a furniture maker in Dublin), written the same
    # way. Their first run found R@5 0.969 / 0.978, MRR 0.948 / 0.973, no-answer 10/11 and 11/11,
    # and 55/70 and 61/68 answerable queries above the bar; acronyms and Chinese short forms of a
    # name inside a longer query, and 现在 left out, were built after reading their misses.
    "zh-check4": MemorySet(
        "Chinese validation set 4 (written apart from the code and the other sets; short forms in longer queries came after its first run)",
        DATA / "zh_validation4.json",
        CHINESE,
    ),
    "en-check3": MemorySet(
        "English validation set 3 (written apart from the code and the other sets; acronyms in longer queries came after its first run)",
        DATA / "en_validation3.json",
        ENGLISH,
    ),
    # A fourth pair (a product manager in Shanghai, a junior doctor in Manchester), written the
    # same way after every change above and changed by none: what the code does on notes and
    # questions it has not seen. One note of the English set carried `sensitivity` among its
    # fields, which Cairn refuses there (it is set through its own parameter); it was dropped.
    "zh-check5": MemorySet(
        "Chinese validation set 5 (written apart from the code and the other sets; nothing built after it)",
        DATA / "zh_validation5.json",
        CHINESE,
    ),
    "en-check4": MemorySet(
        "English validation set 4 (written apart from the code and the other sets; nothing built after it)",
        DATA / "en_validation4.json",
        ENGLISH,
    ),
    # A fifth pair (an export operations manager in Ningbo, a sound engineer and piano teacher in
    # Toronto), written the same way after the answer share for lines. Its first run read R@5 0.980
    # / 0.971 and MRR 0.909 / 0.914; the seam around a one-character word came after reading its
    # Chinese misses and moved none of its figures.
    "zh-check6": MemorySet(
        "Chinese validation set 6 (written apart from the code and the other sets)",
        DATA / "zh_validation6.json",
        CHINESE,
    ),
    "en-check5": MemorySet(
        "English validation set 5 (written apart from the code and the other sets)",
        DATA / "en_validation5.json",
        ENGLISH,
    ),
    # A sixth pair (a physics teacher in Xi'an, a bridge engineer in Cardiff), written the same way
    # after the coordination over neighbouring lines. Its first run read R@5 0.940 / 0.960, MRR
    # 0.891 / 0.893, 60/69 and 60/70 answerable queries above the bar, no-answer 7/11 and 3/11;
    # short forms of long names (西工大附中) and acronyms of names with "of the" inside (OPG) came
    # after reading its misses.
    "zh-check7": MemorySet(
        "Chinese validation set 7 (written apart from the code and the other sets; short forms of long names came after its first run)",
        DATA / "zh_validation7.json",
        CHINESE,
    ),
    "en-check6": MemorySet(
        "English validation set 6 (written apart from the code and the other sets; acronyms of names with two short words inside came after its first run)",
        DATA / "en_validation6.json",
        ENGLISH,
    ),
    # A seventh pair (a veterinarian with a clinic in Kunming, a data journalist and beekeeper in
    # Melbourne), written the same way after the labelled line's context share. Its first run read
    # R@5 0.997 / 0.987, MRR 0.967 / 0.968, 58/70 and 62/69 answerable queries above the bar,
    # no-answer 7/11 and 8/11; nothing was changed after it.
    "zh-check8": MemorySet(
        "Chinese validation set 8 (written apart from the code and the other sets)",
        DATA / "zh_validation8.json",
        CHINESE,
    ),
    "en-check7": MemorySet(
        "English validation set 7 (written apart from the code and the other sets)",
        DATA / "en_validation7.json",
        ENGLISH,
    ),
}
K = 5
LIMIT = 10
PLAIN = "plain bigram BM25"
PLAIN_NOTE = (
    "FTS5 bm25() over text pre-split into CJK character bigrams and lower-cased words (no stemming, "
    "no stop words), OR of the query's own bigrams and words"
)


@dataclass(frozen=True)
class SetNote:
    title: str
    type: str
    folder: str
    tags: tuple[str, ...]
    observations: tuple[str, ...]
    relations: tuple[str, ...]
    fields: dict = field(default_factory=dict, hash=False)

    def document(self) -> str:
        return "\n".join([self.title, " ".join(self.tags), *self.observations, *self.relations])


@dataclass(frozen=True)
class SetQuery:
    q: str
    kind: str
    expect: tuple[str, ...]
    tags: tuple[str, ...] = ()
    type: str | None = None


def load(path: Path) -> tuple[list[SetNote], list[SetQuery]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = [
        SetNote(
            n["title"],
            n["type"],
            n["folder"],
            tuple(n["tags"]),
            tuple(n["observations"]),
            tuple(n["relations"]),
            dict(n.get("fields") or {}),
        )
        for n in data["notes"]
    ]
    queries = [
        SetQuery(q["q"], q["kind"], tuple(q["expect"]), tuple(q.get("tags") or ()), q.get("type"))
        for q in data["queries"]
    ]
    return notes, queries


# A searcher answers a query with results, best first: each is [title, *titles of its related notes].
Searcher = Callable[[SetQuery], list[list[str]]]


def baseline_searcher(
    notes: Sequence[SetNote], tokenize_spec: str | None, *, lines: bool = False
) -> Searcher:
    """FTS5 with ``tokenize_spec``, or ``PlainBigrams`` for None; over whole notes, or with
    ``lines`` over each observation and relation of each note, the lines a Cairn line hit can be
    (a hit then names the note its line is in)."""
    docs = [
        (i, text)
        for i, n in enumerate(notes)
        for text in ([*n.observations, *n.relations] if lines else [n.document()])
    ]
    texts = [text for _, text in docs]
    index = PlainBigrams(texts) if tokenize_spec is None else FTS5Baseline(texts, tokenize_spec)

    def search(q: SetQuery) -> list[list[str]]:
        allowed = [
            i
            for i, n in enumerate(notes)
            if (q.type is None or n.type == q.type) and all(t in n.tags for t in q.tags)
        ]
        if not q.q.strip():  # a filter-only query lists the filtered notes
            return [[notes[i].title] for i in allowed[:LIMIT]]
        ok = set(allowed)
        ranked = [docs[d][0] for d in index.search(q.q, len(docs)) if docs[d][0] in ok]
        return [[notes[i].title] for i in ranked[:LIMIT]]

    return search


def cairn_searcher(notes: Sequence[SetNote], workdir: Path, *, lines: bool = False) -> Searcher:
    """Cairn over the notes written to a vault in ``workdir``; with ``lines``, line hits (each
    names its note)."""
    from cairn import Memory

    mem = Memory.open(workdir / "vault", home=workdir / "home")
    with a_minute_apart():  # the same figures on every run
        for n in notes:
            mem.write(
                n.title,
                type=n.type,
                folder=n.folder,
                tags=n.tags,
                observations=n.observations,
                relations=n.relations,
                fields=n.fields or None,
            )

    def search(q: SetQuery) -> list[list[str]]:
        if lines and q.q.strip():
            return [
                [h.title] for h in mem.search(q.q, tags=q.tags, type=q.type, limit=LIMIT, granularity="line")
            ]
        hits = mem.search(q.q, tags=q.tags, type=q.type, limit=LIMIT)
        search.coverage[q.q] = [h.coverage for h in hits]  # type: ignore[attr-defined]
        return [[h.title, *(r.target for r in h.related)] for h in hits]

    search.coverage = {}  # type: ignore[attr-defined]
    return search


COVERAGE_BAR = 0.5  # Cairn's documented bar: a hit holding less of the query is a weak match


def bar_counts(
    queries: Sequence[SetQuery], coverage: dict[str, list[float | None]]
) -> tuple[int, int, int, int]:
    """How Cairn's relevance bar separates no-answer queries from answerable ones: no-answer
    queries with no hit at or above it, of how many; answerable ones whose top hit is, of how many."""
    none = [q for q in queries if not q.expect and q.q.strip()]
    quiet = sum(1 for q in none if all((c or 0) < COVERAGE_BAR for c in coverage.get(q.q, [])))
    answerable = [q for q in queries if q.expect and q.q.strip()]
    confident = sum(1 for q in answerable if any((c or 0) >= COVERAGE_BAR for c in coverage.get(q.q, [])[:1]))
    return quiet, len(none), confident, len(answerable)


def coverage_lines(queries: Sequence[SetQuery], coverage: dict[str, list[float | None]]) -> list[str]:
    quiet, none, confident, answerable = bar_counts(queries, coverage)
    return [
        f"Cairn's relevance bar (hit `coverage` >= {COVERAGE_BAR}): {quiet}/{none} no-answer queries come back "
        f"empty or with every hit below it; {confident}/{answerable} answerable queries have a top hit at or "
        "above it (the rest are still returned, marked weak by their coverage)."
    ]


@dataclass
class SetScores:
    name: str
    by_kind: dict[str, tuple[float, float]]  # kind -> (recall@K, MRR)
    related_recall: float  # relation queries: recall@K counting each hit's related[] too
    overall: tuple[float, float]
    empty_no_answer: int
    no_answer: int
    failures: list[tuple[SetQuery, list[str]]]
    seconds: float


def evaluate(name: str, queries: Sequence[SetQuery], search: Searcher) -> SetScores:
    per_kind: dict[str, list[tuple[float, float]]] = {}
    empty, n_none, failures, rel = 0, 0, [], []
    t0 = time.perf_counter()
    for q in queries:
        results = search(q)
        got = [r[0] for r in results]
        if not q.expect:
            n_none += 1
            empty += not got
            if got:
                failures.append((q, got[:3]))
            continue
        gold = set(q.expect)
        r = recall_at([[t] for t in got], gold, K)
        per_kind.setdefault(q.kind, []).append((r, reciprocal_rank(got, gold)))
        if q.kind == "relation":
            rel.append(recall_at(results, gold, K))
        if r < 1:
            failures.append((q, got[:3]))
    seconds = time.perf_counter() - t0
    by_kind = {k: (mean(x for x, _ in v), mean(y for _, y in v)) for k, v in per_kind.items()}
    all_pairs = [p for v in per_kind.values() for p in v]
    overall = (mean(x for x, _ in all_pairs), mean(y for _, y in all_pairs))
    return SetScores(name, by_kind, mean(rel), overall, empty, n_none, failures, seconds)


def report(
    heading: str, scores: Sequence[SetScores], notes: Sequence[SetNote], queries: Sequence[SetQuery], extra=()
) -> str:
    kinds = list(dict.fromkeys(q.kind for q in queries if q.expect))
    counts = {k: sum(1 for q in queries if q.kind == k) for k in kinds}
    lines = [
        f"## {heading}",
        "",
        f"{len(notes)} notes, {sum(len(n.observations) for n in notes)} observations, "
        f"{sum(len(n.relations) for n in notes)} relations; {len(queries)} queries "
        f"({sum(1 for q in queries if not q.expect)} with no answer). Recall@{K} and MRR over answerable queries.",
        "",
    ]
    rows = [
        [s.name, s.overall[0], s.overall[1], f"{s.empty_no_answer}/{s.no_answer}", f"{s.seconds * 1000:.0f}"]
        for s in scores
    ]
    lines.append(md_table(["retriever", f"R@{K}", "MRR", "no-answer queries empty", "ms total"], rows))
    if len(scores) > 1:
        ref = scores[0]
        lines += [""] + [
            f"- {ref.name} vs {s.name}: R@{K} {_ratio(ref.overall[0], s.overall[0])}, "
            f"MRR {_ratio(ref.overall[1], s.overall[1])}"
            for s in scores[1:]
        ]
    lines += [
        "",
        "Relation queries counting each hit's `related[]` (one hop, as an agent sees it): "
        + ", ".join(f"{s.name} R@{K} {s.related_recall:.3f}" for s in scores)
        + ".",
    ]
    lines += ["", f"Per kind (R@{K} / MRR):", ""]
    lines.append(
        md_table(
            ["kind", "n", *[s.name for s in scores]],
            [
                [k, counts[k], *[f"{s.by_kind[k][0]:.3f} / {s.by_kind[k][1]:.3f}" for s in scores]]
                for k in kinds
            ],
        )
    )
    if scores:
        lines += ["", f"Misses of {scores[0].name} (query → top 3):", ""]
        for q, got in scores[0].failures:
            filt = f" [type={q.type} tags={list(q.tags)}]" if (q.type or q.tags) else ""
            want = " / ".join(q.expect) if q.expect else "nothing"
            lines.append(f"- `{q.q}`{filt} ({q.kind}; want {want}) → {' | '.join(got) or '(empty)'}")
    lines += ["", *extra]
    return "\n".join(lines).rstrip() + "\n"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a (baseline 0)"


def run(key: str = "zh", with_cairn: bool = True, workdir: Path | None = None) -> str:
    spec = SETS[key]
    notes, queries = load(spec.path)
    scores, extra = [], []
    line_scores = []
    if with_cairn:
        with tempfile.TemporaryDirectory(prefix=f"cairn-{key}-", dir=workdir) as tmp:
            try:
                searcher = cairn_searcher(notes, Path(tmp))
                scores.append(evaluate("Cairn", queries, searcher))
                extra += coverage_lines(queries, searcher.coverage)  # type: ignore[attr-defined]
                line_scores.append(
                    evaluate("Cairn", queries, cairn_searcher(notes, Path(tmp) / "lines", lines=True))
                )
            except Exception as exc:
                extra.append(f"Cairn: not measured ({type(exc).__name__}: {exc}).")
                print(f"{key}: Cairn failed: {exc!r}", file=sys.stderr)
    scores.append(evaluate(PLAIN, queries, baseline_searcher(notes, None)))
    line_scores.append(evaluate(PLAIN, queries, baseline_searcher(notes, None, lines=True)))
    for tokenizer in spec.baselines.tokenizers:
        scores.append(evaluate(f"FTS5 {tokenizer}", queries, baseline_searcher(notes, tokenizer)))
    if with_cairn and len(line_scores) == 2:
        plain_bar(key, "note", f"R@{K}", scores[0].overall[0], scores[1].overall[0])
        plain_bar(key, "line", f"R@{K}", line_scores[0].overall[0], line_scores[1].overall[0])
    extra += [
        "",
        f"Line hits (each hit is one line; it counts for the note it is in). R@{K} / MRR over answerable "
        "queries, the plain baseline over one document per observation or relation line (titles and tags are no lines):",
        "",
        md_table(["retriever", f"R@{K}", "MRR"], [[s.name, s.overall[0], s.overall[1]] for s in line_scores]),
        "",
    ]
    extra.append(
        "Baselines: one note = one document (title, tags, observation and relation lines); query = OR of the "
        "query's `\\w+` runs, quoted; filters applied by restricting candidates; a filter-only query lists them. "
        + spec.baselines.note
        + f" {PLAIN}: `{PLAIN_NOTE}`."
    )
    return report(spec.heading, scores, notes, queries, extra)


if __name__ == "__main__":
    for key in [a for a in sys.argv[1:] if a in SETS] or list(SETS):
        print(run(key, with_cairn="--no-cairn" not in sys.argv))
