"""LoCoMo evidence retrieval: Cairn beside keyword baselines (see ../shared/data/README.md).

Each conversation becomes its own vault: one note per session, one observation per turn
(category = speaker, context = dia_id). Every question with evidence is asked with the bare
question; a hit (a line) points to the dia_id its observation records.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .baselines import BM25Baseline, FTS5Baseline, PlainBigrams
from .common import a_minute_apart, locomo_path, md_table, mean, plain_bar, recall_at

KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# The paper (Maharana et al. 2024), Table 3, DRAGON over "Dialog": overall figures as given in the
# data README, and the one per-category figure it gives (multi-hop R@5); the others are not shown.
DRAGON = {5: 0.567, 10: 0.662}
DRAGON_R5_BY_CATEGORY = {1: 0.354}


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    when: str  # the session's date_time, as given

    def content(self) -> str:
        """The turn's text, plus the image caption when present."""
        return self.text + (f" [shares image: {self.caption}]" if self.caption else "")

    def document(self) -> str:
        """The turn as one baseline document: ``<session date_time> <speaker>: <content>``."""
        return f"{self.when} {self.speaker}: {self.content()}"


@dataclass(frozen=True)
class Session:
    number: int
    date: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    gold: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    dropped_ids: int  # evidence ids that name no turn

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


def repair_evidence(raw: Sequence[str]) -> tuple[list[str], int]:
    """Split ``"D8:6; D9:17"``, repair ``"D:11:26"`` and ``"D30:05"``.

    Returns the ids and how many pieces could not be read as an id at all.
    """
    out, bad = [], 0
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item).strip()):
            m = _EVIDENCE.match(piece)
            if m:
                out.append(f"D{int(m[1])}:{int(m[2])}")
            elif piece:
                bad += 1
    return out, bad


def load(path: Path | None = None) -> list[Conversation]:
    data = json.loads((path or locomo_path()).read_text(encoding="utf-8"))
    convs = []
    for sample in data:
        c = sample["conversation"]
        sessions = []
        n = 1
        while f"session_{n}" in c:
            when = c.get(f"session_{n}_date_time", "")
            turns = tuple(
                Turn(t["dia_id"], t["speaker"], t["text"], t.get("blip_caption") or None, when)
                for t in c[f"session_{n}"]
            )
            if turns:
                sessions.append(Session(n, when, turns))
            n += 1
        known = {t.dia_id for s in sessions for t in s.turns}
        questions, dropped = [], 0
        for qa in sample["qa"]:
            ids, bad = repair_evidence(qa.get("evidence") or [])
            gold = frozenset(i for i in ids if i in known)
            dropped += bad + len(set(ids) - gold)
            if gold:
                questions.append(Question(qa["question"], int(qa["category"]), gold))
        convs.append(
            Conversation(
                sample["sample_id"],
                (c["speaker_a"], c["speaker_b"]),
                tuple(sessions),
                tuple(questions),
                dropped,
            )
        )
    return convs


# A retriever is built per conversation and answers a question with results, best first;
# each result is the list of dia_ids it points to.
Retriever = Callable[[str], list[list[str]]]
RetrieverFactory = Callable[[Conversation], Retriever]


def baseline_factory(kind: str) -> RetrieverFactory:
    def build(conv: Conversation) -> Retriever:
        turns = conv.turns
        docs = [t.document() for t in turns]
        index = {"bm25": BM25Baseline, "plain": PlainBigrams}.get(kind, lambda d: FTS5Baseline(d, kind))(docs)
        return lambda q: [[turns[i].dia_id] for i in index.search(q, max(KS))]

    return build


def plain_sessions(conv: Conversation) -> Retriever:
    """Plain bigram BM25 with one document per session (its date, then its turns): a hit points
    to every turn of its session, as a Cairn note hit does."""
    docs = [s.date + "\n" + "\n".join(t.document() for t in s.turns) for s in conv.sessions]
    index = PlainBigrams(docs)
    ids = [[t.dia_id for t in s.turns] for s in conv.sessions]
    return lambda q: [ids[i] for i in index.search(q, max(KS))]


# -- Cairn ------------------------------------------------------------------------------------


def session_date(raw: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` -> ``"8 May 2023"`` (the raw text when it does not parse)."""
    m = re.search(r"on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", raw)
    return f"{m[1]} {m[2]} {m[3]}" if m else raw.strip()


def observation(turn: Turn, with_date: bool = False) -> str:
    """``[speaker] text [shares image: caption] (dia_id)``, sanitised minimally.

    ``with_date`` puts the session date in the context too: ``(D1:3, 8 May 2023)``.

    Newlines become spaces, square brackets in the text become parentheses (a leading ``[``
    would read as a category), ``#`` followed by a word becomes ``＃`` so it is not taken as a tag,
    and our own ``(dia_id)`` always closes the line so a trailing ``(...)`` of the text stays text.
    """
    text = " ".join(turn.content().split())
    text = re.sub(r"#(?=\w)", "＃", text)
    speaker = re.sub(r"[\[\]#()]", "", turn.speaker).strip() or "speaker"
    context = f"{turn.dia_id}, {session_date(turn.when)}" if with_date else turn.dia_id
    return f"[{speaker}] {text} ({context})"


_DIA = re.compile(r"D\d+:\d+")


def cairn_factory(
    workdir: Path, stats: dict[str, float], with_date: bool = False, granularity: str = "line"
) -> RetrieverFactory:
    """Cairn over one vault per conversation; a note hit (``granularity="note"``) points to every
    turn of its session."""
    from cairn import Memory  # imported late: baselines run without a working Memory

    def build(conv: Conversation) -> Retriever:
        root = Path(tempfile.mkdtemp(prefix=f"{conv.sample_id}-", dir=workdir))
        mem = Memory.open(root / "vault", home=root / "home")
        a, b = conv.speakers
        line_ids: dict[tuple[str, int], str] = {}
        t0 = time.perf_counter()
        with a_minute_apart():  # the same figures on every run
            for s in conv.sessions:
                note = mem.write(
                    f"Session {s.number} — {a} & {b}, {session_date(s.date)}",
                    observations=[observation(t, with_date) for t in s.turns],
                    tags=[a, b],
                    fields={"date": session_date(s.date), "session": s.number, "sample": conv.sample_id},
                    folder="sessions",
                )
                note = mem.read(note.permalink)
                for obs in note.observations:
                    m = _DIA.match(obs.context or "")
                    if m:
                        line_ids[(note.path, obs.line)] = m.group()
        stats["load_s"] = stats.get("load_s", 0.0) + time.perf_counter() - t0
        expected = sum(len(s.turns) for s in conv.sessions)
        if len(line_ids) != expected:
            raise RuntimeError(
                f"{conv.sample_id}: {len(line_ids)} observation lines read back, {expected} written"
            )

        in_note: dict[str, list[str]] = {}
        for (path, _), dia in sorted(line_ids.items()):
            in_note.setdefault(path, []).append(dia)

        def retrieve(q: str) -> list[list[str]]:
            if granularity == "note":
                return [in_note.get(h.path, []) for h in mem.search(q, limit=max(KS))]
            hits = mem.search(q, granularity="line", limit=max(KS))
            out = []
            for h in hits:
                dia = line_ids.get((h.path, h.line))
                stats["hits"] = stats.get("hits", 0) + 1
                if dia is None:
                    stats["unmapped"] = stats.get("unmapped", 0) + 1
                out.append([dia] if dia else [])
            return out

        return retrieve

    return build


def unshared_evidence(convs: Sequence[Conversation]) -> str:
    """How many evidence turns, per category, share no word with their question but a speaker's
    name: whole words as Cairn's search takes them (stemmed; stopwords and particles left out;
    its prefix matches not counted). No keyword ranking can find such a turn by its own words."""
    from cairn import tokenize
    from cairn.search.analysis import search_terms

    unshared = dict.fromkeys(CATEGORIES, 0)
    total = dict.fromkeys(CATEGORIES, 0)
    for conv in convs:
        names = {t for speaker in conv.speakers for t in tokenize.tokens(speaker, stem=tokenize.STEM_ENGLISH)}
        turns = {t.dia_id: t for t in conv.turns}
        for q in conv.questions:
            asked = set(search_terms(q.text)) - names
            for dia_id in q.gold:
                words = set(tokenize.tokens(turns[dia_id].content(), stem=tokenize.STEM_ENGLISH))
                total[q.category] += 1
                unshared[q.category] += not asked & words
    shares = ", ".join(
        f"{CATEGORIES[c]} {unshared[c]} of {total[c]} ({unshared[c] / total[c]:.0%})" for c in CATEGORIES
    )
    return (
        "Evidence turns that share no word with their question but a speaker's name (whole words, "
        f"stemmed, as Cairn's search takes them): {shares}."
    )


# -- evaluation -------------------------------------------------------------------------------


@dataclass
class Scores:
    name: str
    by_cat: dict[int, dict[int, float]]  # category -> k -> mean recall
    overall: dict[int, float]
    seconds: float
    n: int


def evaluate(name: str, convs: Sequence[Conversation], factory: RetrieverFactory) -> Scores:
    per_cat: dict[int, dict[int, list[float]]] = {c: {k: [] for k in KS} for c in CATEGORIES}
    t0 = time.perf_counter()
    for conv in convs:
        retrieve = factory(conv)
        for q in conv.questions:
            results = retrieve(q.text)
            for k in KS:
                per_cat[q.category][k].append(recall_at(results, set(q.gold), k))
    seconds = time.perf_counter() - t0
    by_cat = {c: {k: mean(v) for k, v in ks.items()} for c, ks in per_cat.items()}
    overall = {k: mean(x for c in CATEGORIES for x in per_cat[c][k]) for k in KS}
    n = sum(len(per_cat[c][KS[0]]) for c in CATEGORIES)
    return Scores(name, by_cat, overall, seconds, n)


def report(scores: Sequence[Scores], convs: Sequence[Conversation], notes: Sequence[str] = ()) -> str:
    n_q = sum(len(c.questions) for c in convs)
    counts = {cat: sum(1 for c in convs for q in c.questions if q.category == cat) for cat in CATEGORIES}
    dropped = sum(c.dropped_ids for c in convs)
    lines = [
        "## LoCoMo evidence retrieval",
        "",
        f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, {n_q} questions with evidence "
        f"({dropped} evidence ids dropped: they name no turn). Recall@k averaged over questions.",
        "",
    ]
    rows: list[list[object]] = [[s.name, *[s.overall[k] for k in KS], f"{s.seconds:.1f}"] for s in scores]
    rows.append(["DRAGON (paper, Table 3, Dialog)", DRAGON[5], DRAGON[10], "", "", ""])
    lines.append(md_table(["retriever", *[f"R@{k}" for k in KS], "seconds"], rows))
    if scores:
        ref = scores[0]
        lines += ["", f"Ratios of {ref.name} to each baseline (R@5 / R@10):", ""]
        for s in [s for s in scores[1:] if not s.name.startswith("Cairn")]:
            lines.append(
                f"- vs {s.name}: {_r(ref.overall[5], s.overall[5])} / {_r(ref.overall[10], s.overall[10])}"
            )
        lines.append(f"- vs DRAGON: {_r(ref.overall[5], DRAGON[5])} / {_r(ref.overall[10], DRAGON[10])}")
    lines += ["", "Per category (R@5 / R@10 / R@25 / R@50):", ""]
    header = ["category", "n", *[s.name for s in scores], "DRAGON (paper), R@5"]
    cat_rows = [
        [
            f"{cat} {label}",
            counts[cat],
            *["/".join(f"{s.by_cat[cat][k]:.3f}" for k in KS) for s in scores],
            f"{DRAGON_R5_BY_CATEGORY[cat]:.3f}" if cat in DRAGON_R5_BY_CATEGORY else "",
        ]
        for cat, label in CATEGORIES.items()
    ]
    lines.append(md_table(header, cat_rows))
    if scores:
        lines += [""] + [
            f"{scores[0].name} vs DRAGON in {CATEGORIES[cat]} at R@5: {scores[0].by_cat[cat][5]:.3f} against "
            f"{dragon:.3f} ({_r(scores[0].by_cat[cat][5], dragon)}; the paper's other per-category figures "
            "are not in the data README)."
            for cat, dragon in DRAGON_R5_BY_CATEGORY.items()
        ]
    lines += ["", *notes]
    return "\n".join(lines).rstrip() + "\n"


def _r(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def run(with_cairn: bool = True, workdir: Path | None = None) -> str:
    convs = load()
    scores, notes = [], []
    if with_cairn:
        for with_date, label in (
            (False, "Cairn (line granularity)"),
            (True, "Cairn, date also in each line"),
        ):
            stats: dict[str, float] = {}
            with tempfile.TemporaryDirectory(prefix="cairn-locomo-", dir=workdir) as tmp:
                try:
                    scores.append(evaluate(label, convs, cairn_factory(Path(tmp), stats, with_date)))
                    notes.append(
                        f"{label}: vaults written through Memory.write in {stats.get('load_s', 0):.1f} s; "
                        f"{int(stats.get('unmapped', 0))} of {int(stats.get('hits', 0))} hits pointed at no turn "
                        "line (note title/heading lines)."
                    )
                except Exception as exc:  # report, keep the baselines
                    notes.append(f"{label}: not measured ({type(exc).__name__}: {exc}).")
                    print(f"locomo: Cairn failed: {exc!r}", file=sys.stderr)
        notes.append(unshared_evidence(convs))
        notes.append(
            "The first Cairn row is the agent-natural layout (date only in the note title and `date` field); "
            "the second also writes the session date into each observation's context, as the baseline "
            "documents carry it."
        )
    for kind, label in (
        ("plain", "plain bigram BM25"),
        ("bm25", "rank_bm25 BM25Okapi"),
        ("unicode61", "FTS5 unicode61"),
        ("porter unicode61", "FTS5 porter unicode61"),
    ):
        scores.append(evaluate(label, convs, baseline_factory(kind)))
    notes.append(
        "Baselines: one turn = one document, `<session date_time> <speaker>: <text> [shares image: <caption>]` "
        "(the speaker and date are what Cairn's note title and category carry); lower-cased `\\w+` tokens "
        "minus a short stopword list, the same tokens for BM25Okapi and for the FTS5 OR query (quoted terms, "
        "ranked by bm25())."
    )
    if with_cairn and scores[0].name.startswith("Cairn"):
        plain_bar(
            "locomo", "line", "R@5", scores[0].overall[5], _named(scores, "plain bigram BM25").overall[5]
        )
        with tempfile.TemporaryDirectory(prefix="cairn-locomo-", dir=workdir) as tmp:
            by_note = [
                evaluate("Cairn (note granularity)", convs, cairn_factory(Path(tmp), {}, granularity="note")),
                evaluate("plain bigram BM25 (one session per document)", convs, plain_sessions),
            ]
        plain_bar("locomo", "note", "R@5", by_note[0].overall[5], by_note[1].overall[5])
        notes.append(
            "Note hits (a session; it counts for every turn in it), R@5 / R@10: "
            + ", ".join(f"{s.name} {s.overall[5]:.3f} / {s.overall[10]:.3f}" for s in by_note)
            + "."
        )
    notes.append(
        "plain bigram BM25: FTS5 bm25() over the same documents pre-split into CJK character bigrams and "
        "lower-cased words, no stemming and no stop words; the query is the OR of its own bigrams and words."
    )
    return report(scores, convs, notes)


def _named(scores: Sequence[Scores], name: str) -> Scores:
    return next(s for s in scores if s.name == name)


if __name__ == "__main__":
    print(run(with_cairn="--no-cairn" not in sys.argv))
