"""The benchmarks' fixed clock (benchmarks/common.py): ties in score fall to the newest note, so
the vaults a benchmark writes must get the same ``modified`` times on every run."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from benchmarks.common import WRITTEN_FROM, a_minute_apart

from cairn import Memory


def test_benchmark_vaults_are_written_on_a_fixed_clock_a_minute_apart(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "vault", home=tmp_path / "home")
    with a_minute_apart():
        written = [memory.write(title, observations=["[a] one"]) for title in ("First", "Second")]
    after = memory.write("Third", observations=["[a] three"])
    stamps = [datetime.fromisoformat(memory.read(n.permalink).modified) for n in (*written, after)]
    assert stamps[:2] == [WRITTEN_FROM, WRITTEN_FROM + timedelta(minutes=1)]
    assert stamps[2] > WRITTEN_FROM + timedelta(days=1)  # the wall clock again, outside it
