"""The web panel: a person looks after their memory in a browser (``cairn serve --http``, at ``/``).

Server-rendered pages over ``Memory``: notes, search, the inbox, proposals, the dream, sync; a
session cookie started from the login link the server prints, and a CSRF token on every change.
"""

from .app import panel_app, with_panel
from .auth import login_link

__all__ = ["login_link", "panel_app", "with_panel"]
