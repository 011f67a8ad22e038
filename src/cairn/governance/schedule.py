"""The daily dream of a long-running ``cairn serve``: a daemon thread that ticks once a minute and
starts the dream of each allowed scope whose dream.json says it is due (``dream_config.due``)."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ..errors import CairnError

if TYPE_CHECKING:
    from ..memory import Memory

TICK_SECONDS = 60.0
log = logging.getLogger("cairn.dream")


def tick(memory: Memory) -> list[dict[str, object]]:
    """One look at every allowed scope; the reports of the dreams it started."""
    ran = []
    for scope in memory.allow_scopes:
        try:
            report = memory.dream_tick(scope=scope)
        except CairnError as exc:  # a broken dream.json: say so, keep ticking
            log.warning("dream schedule of scope %s: %s", scope, exc.message)
            continue
        if report is not None:
            ran.append(report)
    return ran


def start(memory: Memory, interval: float = TICK_SECONDS) -> threading.Event:
    """Start ticking in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            try:
                tick(memory)
            except Exception:  # never let one bad tick end the schedule of a server
                log.exception("dream schedule tick failed")

    threading.Thread(target=loop, name="cairn-dream-schedule", daemon=True).start()
    return stop
