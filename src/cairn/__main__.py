"""``python -m cairn``: the same as the ``cairn`` command."""

from .cli import app

if __name__ == "__main__":
    app(prog_name="cairn")
