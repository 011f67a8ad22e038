"""Sync of a vault folder with a remote store (DESIGN section 6).

    remotes.py   which remote a vault has, and its credentials (state directory, 0600)
    state.py     what both sides last agreed on: versions and base copies
    outbox.py    local changes waiting for the remote, durable and ordered
    merge.py     the pure three-way merge of a note's text
    syncer.py    one run: pull, push, merge or keep a conflict copy
    link.py      when Memory syncs, and what a failed sync means for the call

Only ``remotes`` is imported when a vault is opened; the rest waits until it has a remote.
"""

from __future__ import annotations

from .link import RemoteLink, status_of

__all__ = ["RemoteLink", "status_of"]
