"""Two processes observing and dreaming at once on one vault: nothing is lost or written twice."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from cairn import Memory

OBSERVER = textwrap.dedent(
    """
    import json, sys
    from cairn import Memory
    vault, home, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    ids = []
    with Memory.open(vault, home=home) as mem:
        for i in range(count):
            ids.append(mem.observe(f"{tag} fact {i}", durable=True)["id"])
    print(json.dumps(ids))
    """
)

DREAMER = textwrap.dedent(
    """
    import json, sys
    from cairn import Memory
    vault, home, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    reports = []
    with Memory.open(vault, home=home) as mem:
        for _ in range(rounds):
            state = mem.dream_load()
            rev = next((s["rev"] for s in state["sections"] if s["name"] == "facts"), None)
            decisions = [
                {"kind": "promote_observation", "observation": o["id"], "section": "facts", "rev": rev}
                for o in state["observations"]
            ]
            reports.append(mem.dream_apply(decisions, "process dream"))
    print(json.dumps(reports))
    """
)


def _run(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_observers_and_two_dreamers_at_once(vault: Path, isolated_home: Path) -> None:
    with Memory.open(vault, home=isolated_home) as mem:
        mem.dream_switch(True)
    procs = [
        _run(OBSERVER, str(vault), str(isolated_home), "alpha", "25"),
        _run(OBSERVER, str(vault), str(isolated_home), "beta", "25"),
        _run(DREAMER, str(vault), str(isolated_home), "6"),
        _run(DREAMER, str(vault), str(isolated_home), "6"),
    ]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        outs.append(json.loads(out))
    written = set(outs[0]) | set(outs[1])
    assert len(written) == 50
    applies = outs[2] + outs[3]
    promoted = [r for report in applies for r in report["results"] if r["status"] == "applied"]
    failed = [r for report in applies for r in report["results"] if r["status"] == "failed"]
    # A decision fails only because the other dreamer got there first, never for another reason.
    assert all(r["reason"] == "rev-conflict" or "unknown observation id" in r["reason"] for r in failed), (
        failed
    )
    with Memory.open(vault, home=isolated_home) as mem:
        state = mem.dream_load()
        still_open = {o["id"] for o in state["observations"]}
        section = next(s for s in state["sections"] if s["name"] == "facts")
    archived = {p.stem for p in (vault / "user" / "inbox" / "archived").glob("*.md")}
    # Every observation is open or archived, never both, never lost.
    assert still_open | archived == written and not still_open & archived
    assert len(archived) == len(promoted)
    lines = [line for line in section["content"].split("\n") if line.startswith("- ")]
    # Every promoted fact is in the section exactly once.
    assert len(lines) == len(set(lines)) == len(promoted)
    text = (vault / "user" / "log.md").read_text(encoding="utf-8")
    heads = [json.loads(line) for line in text.split("\n") if line.startswith("{")]
    assert len(heads) == len(applies) == 12
    assert sum(h["applied"] for h in heads) == len(promoted)
