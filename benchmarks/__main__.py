"""``python -m benchmarks [--only locomo|zh|en|zh-check|en-check|heldout-zh[-dev|-held]|heldout-en[...]|scale|peers|ablations|web] [--peers] [--large] [--n N] [--no-cairn]``

Runs the LoCoMo retrieval benchmark, the Chinese and English memory sets (and their validation sets), the dev halves of the held-out sets and the scale benchmark, prints a
Markdown report and writes it to ``benchmarks/results/report.md`` (a run of some parts only, to
``benchmarks/results/partial/``, unless ``--output`` says where). The basic-memory comparison
(slow; needs Python >= 3.12) runs only when asked: ``--only peers`` or ``--peers``
(``make bench BENCH_ARGS=--peers``). The ablations (each keyword technique switched off in
turn; about seventeen minutes) run only with ``--only ablations``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import sqlite3
import sys
import time
import traceback
from datetime import UTC, datetime

import apsw

from . import ablations, heldout, locomo, memory_sets, peers, scale, sync_bench, web_bench, yardstick
from .common import REPO, RESULTS, MissingData, plain_summary

# The held-out sets (``heldout.py``): all users as first run, the dev half worked on, the held-out
# half for final reports only.
HELDOUT = {
    f"heldout-{language}{suffix}": (language, half)
    for language in ("zh", "en")
    for suffix, half in (("", "all"), ("-dev", "dev"), ("-held", "held-out"))
}

# Each special case switched off on one half of the held-out sets (the dev half while working).
ABLATIONS_HELDOUT = {"ablations-heldout": "held-out", "ablations-dev": "dev"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[2])
    ap.add_argument(
        "--only",
        choices=(
            "locomo",
            *memory_sets.SETS,
            *HELDOUT,
            "scale",
            "peers",
            "ablations",
            *ABLATIONS_HELDOUT,
            "web",
            "sync",
        ),
        action="append",
        help="run only these (repeatable)",
    )
    ap.add_argument("--peers", action="store_true", help="also run basic-memory beside Cairn (slow)")
    ap.add_argument("--peer-notes", type=int, default=300, help="notes in the peer comparison (default 300)")
    ap.add_argument(
        "--large", action="store_true", help="scale benchmark with 100,000 notes instead of 10,000"
    )
    ap.add_argument("--n", type=int, help="scale benchmark with N notes (overrides --large)")
    ap.add_argument("--no-cairn", action="store_true", help="baselines only (LoCoMo and the memory sets)")
    ap.add_argument(
        "--output",
        help="where to write the report (default: results/report.md; with --only, results/partial/<parts>.md,"
        " so that a partial run never overwrites the full report)",
    )
    args = ap.parse_args(argv)
    # Commands are timed as installed, byte code compiled: an editable install run with
    # PYTHONDONTWRITEBYTECODE would compile every changed module again in every command.
    compileall.compile_dir(REPO / "src" / "cairn", quiet=1)
    parts = args.only or ["locomo", *memory_sets.SETS, "heldout-zh-dev", "heldout-en-dev", "scale"]
    if args.peers and "peers" not in parts:
        parts.append("peers")
    n = args.n or (100_000 if args.large else 10_000)
    started = datetime.now(UTC)
    yardstick_start_s = yardstick.measure()
    sections: list[str] = []
    failed = False
    for part in parts:
        t0 = time.perf_counter()
        print(f"[benchmarks] {part} ...", file=sys.stderr, flush=True)
        try:
            if part == "locomo":
                text = locomo.run(with_cairn=not args.no_cairn)
            elif part in memory_sets.SETS:
                text = memory_sets.run(part, with_cairn=not args.no_cairn)
            elif part in HELDOUT:
                text = heldout.run(*HELDOUT[part])
            elif part == "peers":
                text = peers.run(args.peer_notes)
            elif part == "ablations":
                text = ablations.run()
            elif part in ABLATIONS_HELDOUT:
                text = ablations.run_heldout(ABLATIONS_HELDOUT[part])
            elif part == "web":
                text = web_bench.run(n)
            elif part == "sync":  # its own file too, results/sync.md
                text = sync_bench.run()
                (RESULTS / "sync.md").write_text(text, encoding="utf-8")
            else:
                text = scale.run(n)
        except MissingData as exc:
            failed = True
            text = f"## {part}\n\nNot run: {exc}\n"
        except Exception:
            failed = True
            text = f"## {part}\n\nFailed:\n\n```\n{traceback.format_exc()}```\n"
        print(text, flush=True)
        sections += [text, f"_{part}: {time.perf_counter() - t0:.0f} s_", ""]
    if summary := plain_summary():
        print(summary, flush=True)
        sections.append(summary)
    header = [
        "# Cairn benchmarks",
        "",
        f"Run {started:%Y-%m-%d %H:%M UTC}; Python {platform.python_version()}, "
        f"SQLite {apsw.sqlite_lib_version()} (Cairn, through APSW; the baselines use the standard library's "
        f"{sqlite3.sqlite_version}), {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}.",
        "",
        yardstick.describe(yardstick_start_s, yardstick.measure()),
        "",
    ]
    report = "\n".join(header + sections)
    default = RESULTS / "partial" / f"{'+'.join(parts)}.md" if args.only else RESULTS / "report.md"
    if parts == ["web"]:
        default = RESULTS / "web.md"
    out = os.path.abspath(args.output or default)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(report)
    print(f"[benchmarks] report written to {out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
