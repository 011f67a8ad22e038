"""Reading and searching the vault: one call per concept, the stages in their own modules."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import context
from .errors import (
    InvalidInput,
)
from .index import Filters
from .mending import mends_index as _mends_index
from .models import (
    Context,
    Hit,
    Note,
    NoteSummary,
)
from .rows import summary
from .search import run
from .vault import (
    bare_permalink,
    parse_moment,
    safe_folder,
)

if TYPE_CHECKING:
    from . import snapshot


MAX_LIMIT = 1000  # hits one search may return


class ReadMethods:
    """Mixed into ``Memory``; ``self`` is the Memory."""

    @_mends_index
    def read(self, identifier: str, *, scope: str | None = None) -> Note:
        """Read by permalink, ``memory://permalink``, exact title, or vault-relative path.

        Raises:
            NotFound: nothing by that name in the scope.
            DamagedNote: the file does not parse.
        """
        scopes = self._read_scopes(scope)
        with self._lock:
            self._sync()
            return self._load(self._resolve(identifier, scopes).path)

    @_mends_index
    def list(
        self,
        *,
        folder: str | None = None,
        tag: str | None = None,
        type: str | None = None,
        include_sensitive: bool = True,
        limit: int | None = None,
        scope: str | Sequence[str] | None = None,
    ) -> list[NoteSummary]:
        """Notes in a folder and/or with a tag and/or of a type, newest first (no bodies)."""
        filters = Filters(
            scopes=self._read_scopes(scope),
            tags=(tag.strip().lstrip("#"),) if tag and tag.strip() else (),  # "#work" as search reads it
            type=type,
            folder=safe_folder(folder) if folder else None,
            include_sensitive=include_sensitive,
        )
        if limit is not None and limit < 1:
            raise InvalidInput("limit must be 1 or more")
        with self._lock:
            self._sync()
            return [summary(row) for row in self._index.list(filters, limit)]

    @_mends_index
    def search(
        self,
        query: str = "",
        *,
        tags: Sequence[str] = (),
        type: str | None = None,
        folder: str | None = None,
        since: str | None = None,
        until: str | None = None,
        created_since: str | None = None,
        created_until: str | None = None,
        where: Mapping[str, Any] | None = None,
        include_sensitive: bool = False,
        include_expired: bool = False,
        limit: int = 10,
        granularity: str = "note",
        scope: str | Sequence[str] | None = None,
    ) -> list[Hit]:
        """Keyword + structure search (DESIGN section 4).

        Args:
            query: words in any language; Chinese needs no spaces. Empty: filters only, newest first.
            tags: every one must be on the note. ``type``, ``folder``: exact type, folder and below.
            since, until: bounds on ``modified`` (ISO date/time, or ``7d``, ``12h``, ``2w`` back).
            created_since, created_until: the same on ``created``.
            where: front-matter filters, ``{"status": "active"}`` or ``{"confidence": {"$gt": 0.7}}``
                with ``$gt $gte $lt $lte $in $ne``.
            include_sensitive: also search notes marked ``sensitivity: sensitive`` and
                observations tagged ``#sensitive``.
            include_expired: also search notes whose ``expires`` has passed.
            granularity: ``note`` (one hit per note) or ``line`` (one hit per matching line).

        Returns:
            Hits, best first; ties by ``modified`` (newest first), then permalink. A note linked
            to or from a hit gains a share of its score (``LINK_SHARE``, more when the query names
            the link's type), so it may be a hit without holding a query word (its ``coverage``
            then says so). A superseded note comes right after the note that replaces it (added
            if the query missed it), and notes that claim different values for one key come
            together, each naming the others.
        """
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
        if granularity not in ("note", "line"):
            raise InvalidInput("granularity must be 'note' or 'line'")
        filters = Filters(
            scopes=self._read_scopes(scope),
            tags=tuple(t.strip().lstrip("#") for t in tags if t.strip()),
            type=type or None,
            folder=safe_folder(folder) if folder else None,
            since=parse_moment(since, self.tz) if since else None,
            until=parse_moment(until, self.tz, end_of_day=True) if until else None,
            created_since=parse_moment(created_since, self.tz) if created_since else None,
            created_until=parse_moment(created_until, self.tz, end_of_day=True) if created_until else None,
            where=dict(where) if where else None,
            include_sensitive=include_sensitive,
            include_expired=include_expired,
            now=time.time(),
        )
        with self._lock:
            self._sync()
            return run.search(self._index, query, filters, limit, granularity)

    @_mends_index
    def context(
        self,
        url: str,
        *,
        depth: int = 1,
        timeframe: str | None = None,
        include_sensitive: bool = False,
        include_expired: bool = False,
        scope: str | Sequence[str] | None = None,
    ) -> Context:
        """Notes named by ``memory://permalink`` (``*`` wildcards allowed) and what their relations
        reach within ``depth`` hops, in both directions; ``timeframe`` (``7d``, an ISO date) keeps
        related notes modified since then. Relations to notes that do not exist yet are listed as
        ``unresolved`` and resolve as soon as the target is written.

        A note named exactly is read whatever it is. As in search, a wildcard and the hops pass over
        sensitive and expired notes, and relations written on #sensitive lines, unless asked for.
        """
        scopes = self._read_scopes(scope)
        if not 0 <= depth <= 5:
            raise InvalidInput("depth must be between 0 and 5")
        bound = parse_moment(timeframe, self.tz) if timeframe else None
        target = bare_permalink(url)
        visible = Filters(
            scopes, include_sensitive=include_sensitive, include_expired=include_expired, now=time.time()
        )
        with self._lock:
            self._sync()
            return context.gather(
                self._index,
                url,
                target,
                resolve=lambda ident: self._resolve(ident, scopes),
                load=self._load,
                depth=depth,
                bound=bound,
                visible=visible,
            )

    @_mends_index
    def snapshot(
        self,
        query: str = "",
        *,
        scopes: str | Sequence[str] | None = None,
        top_k: int = 20,
        max_bytes: int = 8192,
        max_tokens: int = 2048,
    ) -> snapshot.Snapshot:
        """Memory to inject before a model step: bounded, escaped, current, in a stable order.

        Notes relevant to ``query`` come first, ranked on their own words (search also lifts the
        notes linked to its hits: a snapshot shows each note's relation lines instead, and reading
        the links of its 3 x ``top_k`` candidates made it half again as slow), then confirmed
        preferences (``type: preference`` not marked ``confirmed: false``), then the scope's
        ``sections/`` by their ``order``. Sensitive notes and observations, expired notes and
        superseded notes never appear; the closing line names what was left out and why.

        Raises:
            InvalidInput: budgets too small to hold even the empty wrapper.
        """
        from . import snapshot_gather  # only snapshots need it: searches start ~8 ms faster without it

        scope_list = self._read_scopes(scopes)
        with self._lock:
            self._sync()
            return snapshot_gather.gather(
                self._index,
                query,
                scope_list,
                top_k=top_k,
                max_bytes=max_bytes,
                max_tokens=max_tokens,
                now=time.time(),
            )
