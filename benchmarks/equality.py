"""Every answer of the read side, field by field: a refactor's check that nothing changed.

Runs the benchmark queries (the memory sets in ``benchmarks/data``, the LoCoMo questions if the
data is there, a generated vault's mixed queries) at note and line granularity, with a snapshot
and a context call beside them, and writes every field of every answer as one JSON line each.
Record a dump with the old code, another with the new, and compare:

    python -m benchmarks.equality dump before.jsonl          # on the old tree (PYTHONPATH=old/src)
    python -m benchmarks.equality dump after.jsonl
    python -m benchmarks.equality compare before.jsonl after.jsonl

Zero differences is the bar. Scores are written with ``repr``: a float that moved in its last
digit is a difference too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .common import REPO, MissingData, a_minute_apart

SCALE_NOTES = 2_000
SCALE_QUERIES = 300
LOCOMO_SNAPSHOT_EVERY = 4  # a snapshot for every 4th LoCoMo question keeps the run to minutes


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses and named tuples by field, floats by repr."""
    if callable(value) and not isinstance(value, type):
        return plain(value())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: plain(getattr(value, name)) for name in value._fields}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, float):
        return repr(value)
    return value


def _answers(mem: Any, label: str, query: str, *, snapshot: bool = True, **filters: Any) -> Iterator[dict]:
    """One record per call: note hits, line hits, a snapshot and the context of the first hit."""
    out: list[dict] = []
    for granularity in ("note", "line"):
        try:
            hits = mem.search(query, granularity=granularity, limit=10, **filters)
            result: Any = plain(hits)
        except Exception as exc:  # an error is an answer too, and must not change
            hits, result = [], f"{type(exc).__name__}: {exc}"
        out.append(
            {"set": label, "q": query, "call": f"search/{granularity}", "filters": filters, "result": result}
        )
        if granularity == "note" and hits:
            try:
                context = plain(mem.context(f"memory://{hits[0].permalink}", depth=2))
            except Exception as exc:
                context = f"{type(exc).__name__}: {exc}"
            out.append({"set": label, "q": query, "call": "context", "result": context})
    if snapshot:
        try:
            snap = mem.snapshot(query)
            result = {"text": snap.text, "items": plain(snap.items), "omitted": plain(snap.omitted)}
        except Exception as exc:
            result = f"{type(exc).__name__}: {exc}"
        out.append({"set": label, "q": query, "call": "snapshot", "result": result})
    yield from out


def memory_sets(work: Path) -> Iterator[dict]:
    from cairn import Memory

    from . import memory_sets as sets

    for path in sorted((REPO / "benchmarks" / "data").glob("*.json")):
        notes, queries = sets.load(path)
        root = Path(tempfile.mkdtemp(prefix=path.stem, dir=work))
        mem = Memory.open(root / "vault", home=root / "home")
        with a_minute_apart():
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
        for q in queries:
            yield from _answers(mem, path.stem, q.q, tags=q.tags, type=q.type)
            yield from _answers(mem, path.stem, q.q, snapshot=False)
        mem.close()


def locomo(work: Path) -> Iterator[dict]:
    from . import locomo as lc

    try:
        convs = lc.load()
    except MissingData as exc:
        print(f"LoCoMo skipped: {exc}", file=sys.stderr)
        return
    from cairn import Memory

    for conv in convs:
        root = Path(tempfile.mkdtemp(prefix=conv.sample_id, dir=work))
        mem = Memory.open(root / "vault", home=root / "home")
        a, b = conv.speakers
        with a_minute_apart():
            for s in conv.sessions:
                mem.write(
                    f"Session {s.number} — {a} & {b}, {lc.session_date(s.date)}",
                    observations=[lc.observation(t) for t in s.turns],
                    tags=[a, b],
                    fields={"date": lc.session_date(s.date), "session": s.number, "sample": conv.sample_id},
                    folder="sessions",
                )
        for i, q in enumerate(conv.questions):
            yield from _answers(mem, conv.sample_id, q.text, snapshot=i % LOCOMO_SNAPSHOT_EVERY == 0)
        mem.close()


def scale(work: Path) -> Iterator[dict]:
    from cairn import Memory

    from .scale import SEED
    from .vaultgen import generate, queries

    vault = work / "scale-vault"
    vault.mkdir()
    notes = generate(vault, SCALE_NOTES, SEED)
    mem = Memory.open(vault, home=work / "scale-home")
    for q in queries(SEED, SCALE_QUERIES, notes):
        yield from _answers(mem, "scale", q)
    mem.close()


PARTS: dict[str, Callable[[Path], Iterator[dict]]] = {"sets": memory_sets, "locomo": locomo, "scale": scale}


def dump(out: Path, parts: list[str]) -> int:
    count = 0
    with tempfile.TemporaryDirectory(prefix="cairn-equality-") as tmp, out.open("w", encoding="utf-8") as f:
        for name in parts:
            work = Path(tmp) / name
            work.mkdir()
            for record in PARTS[name](work):
                f.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
    print(f"{count} answers written to {out}")
    return 0


def compare(before: Path, after: Path, shown: int = 5) -> int:
    old = before.read_text(encoding="utf-8").splitlines()
    new = after.read_text(encoding="utf-8").splitlines()
    differ = [i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    if len(old) != len(new):
        print(f"{len(old)} answers before, {len(new)} after")
    for i in differ[:shown]:
        a, b = json.loads(old[i]), json.loads(new[i])
        print(f"line {i + 1}: {a['set']} {a['call']} {a['q']!r}")
        print(f"  before: {json.dumps(a['result'], ensure_ascii=False)[:600]}")
        print(f"  after:  {json.dumps(b['result'], ensure_ascii=False)[:600]}")
    print(f"{len(differ)} of {len(old)} answers differ")
    return 1 if differ or len(old) != len(new) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.equality", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every answer to a JSON-lines file")
    d.add_argument("out", type=Path)
    d.add_argument(
        "--only", action="append", choices=sorted(PARTS), help="a part to run (repeat); all by default"
    )
    c = sub.add_parser("compare", help="say where two dumps differ; exit 1 if they do")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        return dump(args.out, args.only or list(PARTS))
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
