"""One module per page group; each offers ``routes(panel)`` and a ``NAV`` list."""

from . import dream, inbox, notes, proposals, search, sync

PAGES = (notes, search, inbox, proposals, dream, sync)
