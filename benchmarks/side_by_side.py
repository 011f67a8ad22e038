"""Old and new search timed side by side: ``python -m benchmarks.side_by_side OLD_REPO [ROUNDS]
[CLI_RUNS]``, where OLD_REPO is a checkout (or ``git archive``) of the code to compare with.

One seeded 10,000-note vault (``vaultgen``), indexed once by each tree into a home of its own.
Each round runs one process per tree, in alternating order, each timing ``Memory.search`` on its
warm index (300 mixed queries, note and line hits); then ``python -m cairn search --json`` runs
alternately from each tree. Prints the medians and the new/old ratio of each round: on a shared
machine the ratio of two readings taken side by side holds far better than either reading.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO

_WORKER = """
import json, sys, time
from pathlib import Path
import cairn
from cairn import Memory
vault, home, qfile = sys.argv[1:4]
qs = json.loads(Path(qfile).read_text(encoding="utf-8"))
mem = Memory.open(Path(vault), home=Path(home))
for q in qs[:20]:
    mem.search(q)
note, line = [], []
for q in qs:
    t = time.perf_counter(); mem.search(q, limit=10); note.append(time.perf_counter() - t)
    t = time.perf_counter(); mem.search(q, limit=10, granularity="line"); line.append(time.perf_counter() - t)
print(json.dumps({"src": cairn.__file__, "note": note, "line": line}))
"""


def main(old: Path, rounds: int = 6, cli_runs: int = 12) -> None:
    from .scale import SEED
    from .vaultgen import generate, queries

    py = str(REPO / ".venv" / "bin" / "python")
    trees = {"old": old / "src", "new": REPO / "src"}
    with tempfile.TemporaryDirectory(prefix="cairn-side-by-side-") as tmp:
        root = Path(tmp)
        vault = root / "vault"
        qs = queries(SEED, 300, generate(vault, 10_000, SEED))
        qfile = root / "queries.json"
        qfile.write_text(json.dumps(qs, ensure_ascii=False), encoding="utf-8")

        def env(which: str) -> dict[str, str]:
            home = str(root / f"home-{which}")
            return {
                **os.environ,
                "PYTHONPATH": str(trees[which]),
                "CAIRN_VAULT": str(vault),
                "CAIRN_HOME": home,
            }

        for which in trees:
            index = "import sys; from pathlib import Path; from cairn import Memory; Memory.open(Path(sys.argv[1]), home=Path(sys.argv[2])).reindex()"
            subprocess.run(
                [py, "-c", index, str(vault), str(root / f"home-{which}")], env=env(which), check=True
            )
        p50s: dict[str, dict[str, list[float]]] = {w: {"note": [], "line": []} for w in trees}
        ratios: dict[str, list[float]] = {"note": [], "line": []}
        for r in range(rounds):
            for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                out = subprocess.run(
                    [py, "-c", _WORKER, str(vault), str(root / f"home-{which}"), str(qfile)],
                    env=env(which),
                    capture_output=True,
                    text=True,
                    check=True,
                )
                found = json.loads(out.stdout.strip().splitlines()[-1])
                if not found["src"].startswith(str(trees[which])):
                    raise RuntimeError(f"{which} ran the cairn at {found['src']}")
                for granularity in ("note", "line"):
                    p50s[which][granularity].append(statistics.median(found[granularity]))
            for granularity in ("note", "line"):
                ratios[granularity].append(p50s["new"][granularity][-1] / p50s["old"][granularity][-1])
        cli: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(cli_runs):
            for which in ("old", "new") if i % 2 == 0 else ("new", "old"):
                t0 = time.perf_counter()
                subprocess.run(
                    [py, "-m", "cairn", "search", "--json", qs[i]],
                    env=env(which),
                    capture_output=True,
                    check=True,
                )
                cli[which].append(time.perf_counter() - t0)
    for granularity in ("note", "line"):
        old_ms, new_ms = (statistics.median(p50s[w][granularity]) * 1000 for w in ("old", "new"))
        each = ", ".join(f"{x:.3f}" for x in ratios[granularity])
        print(
            f"search p50, {granularity} hits: old {old_ms:.2f} ms, new {new_ms:.2f} ms; "
            f"median of per-round new/old {statistics.median(ratios[granularity]):.3f} ({each})"
        )
    old_cli, new_cli = (statistics.median(cli[w]) * 1000 for w in ("old", "new"))
    print(
        f"cairn search --json, median of {cli_runs}: old {old_cli:.0f} ms, new {new_cli:.0f} ms; new/old {new_cli / old_cli:.3f}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(int(a) for a in sys.argv[2:4]))
