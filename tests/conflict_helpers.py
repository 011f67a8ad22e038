"""A real sync conflict for the tests and the screenshots: two vaults on one folder remote
(``file://``) edit the same line; the second to sync keeps its text and the first one's is kept
whole under ``.conflict/``."""

from __future__ import annotations

from pathlib import Path

from cairn import Memory
from sync_helpers import open_vault


def make_conflict(
    tmp_path: Path,
    *,
    title: str = "Plan",
    line: str = "[when] Monday",
    theirs: str = "[when] Wednesday",
    mine: str = "[when] Friday",
    names: tuple[str, str] = ("a", "b"),
    body: str = "",
) -> tuple[Memory, str, str]:
    """The second vault, open (the caller closes it), holding ``mine`` in the note, with the
    first vault's ``theirs`` as a conflict copy; also the note's path and the copy's path."""
    other, me = names
    remote = tmp_path / "remote"
    remote.mkdir(exist_ok=True)
    url = remote.as_uri()
    with open_vault(tmp_path, other, url) as a:
        note = a.write(title, body=body, observations=[line])
    with open_vault(tmp_path, me, url):
        pass  # opening syncs: it pulls the note
    with open_vault(tmp_path, other, url) as a:
        a.edit(note.permalink, line, theirs)
    mine_file = tmp_path / f"vault-{me}" / note.path
    mine_file.write_text(mine_file.read_text(encoding="utf-8").replace(line, mine), encoding="utf-8")
    memory = open_vault(tmp_path, me, url)  # opening syncs: both changed the line; ours is kept
    copies = [c["path"] for c in memory.conflicts(texts=False)]
    assert len(copies) == 1, copies
    return memory, note.path, copies[0]
