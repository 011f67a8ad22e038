"""Held-out sets (``data/heldout/``): daily-life first-person messages, each with a place and a
time, and questions about them, written by someone who saw neither the code nor the other sets
(issue 37). Cairn beside plain bigram BM25 on the same notes and lines, in the same run.

Each user's messages become a vault of their own, in two layouts: one note per day with one
observation line per message (``[place] text (HH:MM)``, the day as the title), and one note per
message (its time as the title, the message as its one line). Every question is asked through
``Memory.search`` at line and at note granularity; a line hit points to its message, a note hit
to every message in its note. Reported: recall of the evidence messages at 5 and 10 and MRR (of
the first evidence), overall and per question kind, and on how many questions Cairn ranks the
first evidence better or worse than the plain baseline.

Users are split by their number over the sorted files (1-based): even-numbered users are the dev
half, worked on; odd-numbered ones the held-out half, run for final reports only.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .baselines import PlainBigrams
from .common import a_minute_apart, md_table, mean, plain_bar, recall_at
from .memory_sets import COVERAGE_BAR

DATA = Path(__file__).resolve().parent / "data" / "heldout"
KS = (5, 10)
LIMIT = 10
KINDS = ("simple", "conditional", "comparative", "aggregative", "two-part")
HALVES = ("all", "dev", "held-out")
GRANULARITIES = ("line", "note")
LAYOUTS = {
    "day": "a note per day, a line per message",
    "message": "a note per message",
}


@dataclass(frozen=True)
class Message:
    id: str
    text: str
    place: str
    time: str  # "2026-01-04 21:15"

    def line(self) -> str:
        """The observation as written: ``[place] text (HH:MM)``; a ``#`` before a word would
        read as a tag and square brackets as a category, so they are written as their
        full-width forms (the text reads the same)."""
        text = " ".join(self.text.split()).replace("[", "［").replace("]", "］")
        text = re.sub(r"#(?=\w)", "＃", text)
        place = re.sub(r"[\[\]#()]", "", self.place).strip() or "-"
        return f"[{place}] {text} ({self.time[11:] or self.time})"


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    text: str
    evidence: frozenset[str]


@dataclass(frozen=True)
class User:
    number: int  # 1-based over the sorted files
    id: str
    messages: tuple[Message, ...]
    questions: tuple[Question, ...]


def data_dir() -> Path:
    """``$CAIRN_HELDOUT`` (a folder of ``zh_part*.json`` / ``en_part*.json``) or ``data/heldout``."""
    return Path(os.environ.get("CAIRN_HELDOUT") or DATA)


def load(language: str, half: str = "all", folder: Path | None = None) -> list[User]:
    """The users of ``language``'s part files, numbered over the files in name order; ``half``:
    ``all``, ``dev`` (even numbers) or ``held-out`` (odd)."""
    from .common import MissingData

    files = sorted((folder or data_dir()).glob(f"{language}_part*.json"))
    if not files:
        raise MissingData(f"no {language}_part*.json in {folder or data_dir()}")
    users: list[User] = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for raw in data["users"]:
            messages = tuple(
                Message(m["id"], m["text"], m.get("place") or "", m["time"]) for m in raw["messages"]
            )
            known = {m.id for m in messages}
            questions = tuple(
                Question(q["id"], q["kind"], q["question"], frozenset(e for e in q["evidence"] if e in known))
                for q in raw["questions"]
            )
            users.append(
                User(
                    len(users) + 1,
                    f"{path.stem}/{raw['id']}",
                    messages,
                    tuple(q for q in questions if q.evidence),
                )
            )
    if half == "dev":
        return [u for u in users if u.number % 2 == 0]
    if half == "held-out":
        return [u for u in users if u.number % 2 == 1]
    return users


# A retriever answers a question with results, best first; each is the message ids it points to.
Retriever = Callable[[str], list[list[str]]]


def notes_of(user: User, layout: str) -> list[tuple[str, list[Message]]]:
    """(title, messages) of each note of ``layout``, in time order."""
    ordered = sorted(user.messages, key=lambda m: (m.time, m.id))
    if layout == "message":
        titles: dict[str, int] = {}
        out = []
        for m in ordered:
            n = titles[m.time] = titles.get(m.time, 0) + 1
            out.append((m.time if n == 1 else f"{m.time} ({n})", [m]))
        return out
    days: dict[str, list[Message]] = {}
    for m in ordered:
        days.setdefault(m.time[:10], []).append(m)
    return list(days.items())


def cairn_retriever(
    user: User, layout: str, workdir: Path, stats: dict[str, int]
) -> Callable[[str], Retriever]:
    """One vault of ``user``'s messages in ``layout``: a retriever for each granularity."""
    from cairn import Memory
    from cairn.errors import CairnError

    mem = Memory.open(workdir / "vault", home=workdir / "home")
    line_ids: dict[tuple[str, int], str] = {}
    in_note: dict[str, list[str]] = {}
    with a_minute_apart():
        for title, messages in notes_of(user, layout):
            lines = [m.line() for m in messages]
            try:
                note = mem.write(title, observations=lines, folder=layout)
            except CairnError:  # a message that reads as a secret: kept, as a sensitive note
                stats["sensitive"] = stats.get("sensitive", 0) + 1
                note = mem.write(title, observations=lines, folder=layout, sensitivity="sensitive")
            note = mem.read(note.permalink)
            if len(note.observations) != len(messages):
                raise RuntimeError(
                    f"{user.id}: {len(note.observations)} lines read back, {len(messages)} written"
                )
            for obs, m in zip(note.observations, messages, strict=True):
                line_ids[(note.path, obs.line)] = m.id
            in_note[note.path] = [m.id for m in messages]

    def at(granularity: str) -> Retriever:
        def retrieve(question: str) -> list[list[str]]:
            hits = mem.search(question, granularity=granularity, limit=LIMIT, include_sensitive=True)
            retrieve.above_bar = bool(hits) and (hits[0].coverage or 0.0) >= COVERAGE_BAR  # type: ignore[attr-defined]
            if granularity == "note":
                return [in_note.get(h.path, []) for h in hits]
            return [[line_ids[(h.path, h.line)]] if (h.path, h.line) in line_ids else [] for h in hits]

        return retrieve

    return at


def plain_retriever(user: User, layout: str, granularity: str) -> Retriever:
    """Plain bigram BM25 over the same documents: each line as Cairn's file holds it, or each
    note as its title and its lines."""
    notes = notes_of(user, layout)
    if granularity == "line":
        docs = [(m.line(), [m.id]) for _, messages in notes for m in messages]
    else:
        docs = [
            ("\n".join([title, *(m.line() for m in messages)]), [m.id for m in messages])
            for title, messages in notes
        ]
    index = PlainBigrams([text for text, _ in docs])
    return lambda q: [docs[i][1] for i in index.search(q, LIMIT)]


@dataclass
class Scores:
    name: str
    # id -> R@5, R@10, RR, rank of the first evidence, whether the top hit is above the bar (Cairn)
    per_question: dict[str, tuple[float, float, float, int, float]]

    def figure(self, questions: Sequence[Question], at: int) -> float:
        return mean(self.per_question[q.id][at] for q in questions)


def first_rank(results: Sequence[Sequence[str]], gold: frozenset[str]) -> int:
    """The rank of the first result pointing at an evidence message (LIMIT + 1: none)."""
    for rank, ids in enumerate(results, 1):
        if gold.intersection(ids):
            return rank
    return LIMIT + 1


def evaluate(
    users: Sequence[User], build: Callable[[User, str], Callable[[str], Retriever]]
) -> dict[tuple[str, str], Scores]:
    """Scores per (layout, granularity): ``build(user, layout)`` gives a retriever per granularity."""
    per: dict[tuple[str, str], dict[str, tuple[float, float, float, int, float]]] = {}
    for layout in LAYOUTS:
        for user in users:
            at = build(user, layout)
            for granularity in GRANULARITIES:
                retrieve = at(granularity)
                for q in user.questions:
                    results = retrieve(q.text)
                    rank = first_rank(results, q.evidence)
                    above = getattr(retrieve, "above_bar", None)
                    per.setdefault((layout, granularity), {})[f"{user.id}/{q.id}"] = (
                        recall_at(results, set(q.evidence), 5),
                        recall_at(results, set(q.evidence), 10),
                        1.0 / rank if rank <= LIMIT else 0.0,
                        rank,
                        float("nan") if above is None else float(above),
                    )
    return {key: Scores(f"{key[1]} ({key[0]})", value) for key, value in per.items()}


def cairn_scores(
    users: Sequence[User], workdir: Path, stats: dict[str, int] | None = None
) -> dict[tuple[str, str], Scores]:
    counter = iter(range(10**9))
    stats = {} if stats is None else stats
    return evaluate(
        users, lambda user, layout: cairn_retriever(user, layout, workdir / str(next(counter)), stats)
    )


def plain_scores(users: Sequence[User]) -> dict[tuple[str, str], Scores]:
    return evaluate(
        users, lambda user, layout: lambda granularity: plain_retriever(user, layout, granularity)
    )


def run(language: str, half: str = "all", workdir: Path | None = None, folder: Path | None = None) -> str:
    """The report section for one language's users (``half``: all, dev or held-out)."""
    users = load(language, half, folder)
    questions = [(f"{u.id}/{q.id}", q) for u in users for q in u.questions]
    keyed = [_Keyed(k, q.kind) for k, q in questions]
    kinds = [k for k in KINDS if any(q.kind == k for _, q in questions)] + sorted(
        {q.kind for _, q in questions} - set(KINDS)
    )
    stats: dict[str, int] = {}
    rows, kind_rows, lines = [], [], []
    part = f"heldout-{language}" + ("" if half == "all" else f" ({half})")
    with tempfile.TemporaryDirectory(prefix=f"cairn-heldout-{language}-", dir=workdir) as tmp:
        cairn_all = cairn_scores(users, Path(tmp), stats)
    plain_all = plain_scores(users)
    for layout, described in LAYOUTS.items():
        for granularity in GRANULARITIES:
            cairn, plain = cairn_all[layout, granularity], plain_all[layout, granularity]
            label = f"{granularity} hits, {described}"
            better = sum(1 for k, _ in questions if cairn.per_question[k][3] < plain.per_question[k][3])
            worse = sum(1 for k, _ in questions if cairn.per_question[k][3] > plain.per_question[k][3])
            rows.append(
                [
                    label,
                    *(f"{_m(cairn, keyed, i)} / {_m(plain, keyed, i)}" for i in range(3)),
                    f"{better} / {worse}",
                    _m(cairn, keyed, 4),
                ]
            )
            kind_rows.append(
                [
                    label,
                    *(
                        f"{_m(cairn, [k for k in keyed if k.kind == kind], 0)} / "
                        f"{_m(plain, [k for k in keyed if k.kind == kind], 0)}"
                        for kind in kinds
                    ),
                ]
            )
            plain_bar(
                part, f"{granularity} ({layout})", "R@5", _mean(cairn, keyed, 0), _mean(plain, keyed, 0)
            )
    counts = ", ".join(f"{kind} {sum(1 for _, q in questions if q.kind == kind)}" for kind in kinds)
    lines += [
        f"## Held-out set, {'Chinese' if language == 'zh' else 'English'} ({half} users)",
        "",
        f"{len(users)} users, {sum(len(u.messages) for u in users)} messages, {len(questions)} questions with "
        f"evidence ({counts}). Each cell: Cairn / plain bigram BM25 over the same notes or lines, this run.",
        "",
        md_table(
            [
                "layout",
                "R@5",
                "R@10",
                "MRR",
                "first evidence ranked better / worse",
                "Cairn's top hit above the bar",
            ],
            rows,
        ),
        "",
        "Per kind, R@5 (Cairn / plain bigram BM25):",
        "",
        md_table(["layout", *kinds], kind_rows),
        "",
        "Users "
        + {
            "all": "all of them",
            "dev": "even-numbered (the dev half)",
            "held-out": "odd-numbered (the held-out half)",
        }[half]
        + "; a vault per user and layout, written through `Memory.write` and searched through `Memory.search` "
        "(sensitive notes included). A message the guard reads as a secret is written in a sensitive note: "
        f"{stats.get('sensitive', 0)} such notes. The last column: the share of questions whose top hit has "
        f"`coverage` >= {COVERAGE_BAR} (Cairn's relevance bar; every question here has an answer). Plain bigram BM25: FTS5 bm25() over the lines as written "
        "(`[place] text (HH:MM)`), or each note's title and lines, pre-split into CJK character bigrams and "
        "lower-cased words; query = OR of its own bigrams and words.",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Keyed:
    key: str
    kind: str


def _mean(scores: Scores, keyed: Sequence[_Keyed], i: int) -> float:
    return mean(scores.per_question[k.key][i] for k in keyed)


def _m(scores: Scores, keyed: Sequence[_Keyed], i: int) -> str:
    return f"{_mean(scores, keyed, i):.3f}"


if __name__ == "__main__":
    print(run(sys.argv[1] if len(sys.argv) > 1 else "zh", sys.argv[2] if len(sys.argv) > 2 else "all"))
