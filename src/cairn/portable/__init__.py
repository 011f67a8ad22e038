"""Moving memory in and out of a vault: the ``cairn-export`` JSON document, and importers.

- ``document``: one note as a record of the document (front matter, title, observations,
  relations, body, path within its scope), the note text a record writes, and the validation
  that names the first bad record (``notes[12].title: missing``).
- ``export``: a vault's notes as one document.
- ``importers``: records read from a basic-memory project, an Obsidian vault or mem0's JSON.
- ``importing``: a whole document checked first, then each note planned (new / same / changed)
  and written through ``Memory.put_note``.
"""

from .document import FORMAT, VERSION

__all__ = ["FORMAT", "VERSION"]
