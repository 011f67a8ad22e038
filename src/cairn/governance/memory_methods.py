"""The governance calls of ``Memory`` (issue 35): inbox, projection, dream; logic in ``cairn.governance``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..freshness import trusted_mtime as _trusted_mtime  # noqa: F401 - where tests have found it

if TYPE_CHECKING:
    from ..memory import Memory  # noqa: F401


class GovernanceMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    def _governance_place(self, scope: str | None) -> Any:
        from .files import Place

        chosen = self._write_scope(scope)
        return Place(
            memory=self,
            vault=self.vault,
            scope=chosen,
            tz=self.tz,
            origin=self.origin,
            home=self.home,
            writing=self._writing,
            taken=lambda: self._index.permalinks(chosen),
        )

    def observe(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        durable: bool | None = None,
        source: str | None = None,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Write a draft observation into ``<scope>/inbox/`` (see ``governance.inbox.observe``).

        Returns ``{"id", "duplicate", "open", "capacity", "path"}``; raises InvalidInput (over
        2,000 characters), SecretRefused, or InboxFull (``observations_max`` open: run a dream).
        """
        from . import inbox

        place = self._governance_place(scope)
        with self._writing():
            return inbox.observe(place, content, tags=tags, durable=durable, source=source or self.origin)

    def projection(self, scope: str | None = None) -> dict[str, Any]:
        """The scope's sections in order, cut at ``inject_char_cap`` characters with a closing line
        saying so; sensitive sections never appear. ``{"scope", "text", "truncated", "chars", "cap", ...}``."""
        from . import sections

        return sections.projection(self._governance_place(scope))

    def dream_load(self, scope: str | None = None) -> dict[str, Any]:
        """Sections, entities and open observations of the scope, each with its ``rev``."""
        from . import dream

        return dream.load(self._governance_place(scope))

    def dream_apply(
        self,
        decisions: Any,
        summary: str = "",
        *,
        scope: str | None = None,
        trigger: str = "api",
        agent: bool = False,
    ) -> dict[str, Any]:
        """Apply a dream's decisions, each on its own and checked against its rev; one entry in
        log.md, index.md rebuilt. Raises DreamOff while the dream is off. From an ``agent`` (a
        model) in approval mode the decisions become one proposal instead (``proposals``)."""
        from . import dream

        place = self._governance_place(scope)
        if agent and self.write_mode == "propose":
            from . import proposal_dream

            return proposal_dream.propose(place, decisions, summary, via=trigger)
        with self._writing():
            return dream.apply(place, decisions, summary, trigger=trigger)

    def dream_status(self, scope: str | None = None) -> dict[str, Any]:
        """dream.json, the open observation count and capacity, and the last log entries."""
        from . import dream, dream_config, inbox

        place = self._governance_place(scope)
        config = dream_config.read(place)
        open_obs, _ = inbox.open_observations(place)
        return {
            "scope": place.scope,
            **config.to_dict(),
            "open": len(open_obs),
            "capacity": place.setting("observations_max", inbox.DEFAULT_MAX_OPEN, least=1),
            "file": place.rel("dream.json"),
            "log": dream.read_log(place, 5),
        }

    def dream_switch(
        self,
        enabled: bool | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        daily_at: str | None = None,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Turn the dream on or off and/or set its model, endpoint and daily time (``""`` clears
        ``daily_at``); returns the new dream.json."""
        from . import dream_config, dream_runner

        place = self._governance_place(scope)
        changes: dict[str, Any] = {}
        if enabled is not None:
            changes["enabled"] = bool(enabled)
        if model is not None:
            changes["model"] = model.strip() or None
        if base_url is not None:
            if base_url.strip():
                dream_runner.endpoint(base_url)  # refuses what is not an http(s) URL
            changes["base_url"] = base_url.strip() or None
        if daily_at is not None:
            changes["daily_at"] = dream_config.check_daily_at(daily_at)
        with self._writing():
            return dream_config.update(place, **changes).to_dict()

    def dream_run(
        self,
        scope: str | None = None,
        *,
        trigger: str = "manual",
        transport: Any = None,
        call_tool: Any = None,
    ) -> dict[str, Any]:
        """Run one dream now with the model of dream.json (``governance.dream_runner.run``)."""
        from . import dream_runner

        place = self._governance_place(scope)
        return dream_runner.run(place, trigger=trigger, transport=transport, call_tool=call_tool)

    def dream_tick(
        self, scope: str | None = None, *, now: datetime | None = None, transport: Any = None
    ) -> Any:
        """Run the scope's daily dream if it is due (the day is stamped first); None if not due."""
        from . import dream_runner

        return dream_runner.scheduled(self._governance_place(scope), now, transport=transport)

    def settle_observation(
        self, observation_id: str, outcome: str, *, reason: str | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """Archive or drop one open observation by hand (a person's decision; no dream needed):
        it moves to ``inbox/archived/`` with ``outcome`` (``archived`` or ``dropped``), and
        log.md records it. Raises NotFound for an id that is not open."""
        from . import inbox

        place = self._governance_place(scope)
        with self._writing():
            return inbox.settle(place, observation_id, outcome, reason)
