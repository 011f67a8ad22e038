"""Vaults on one remote for the sync tests: each its own vault folder and state directory."""

from __future__ import annotations

from pathlib import Path

from cairn import Memory
from cairn.sync import remotes


def attach(tmp_path: Path, name: str, url: str, **credentials: str) -> tuple[Path, Path]:
    """(vault, home) of a new vault named ``name`` with ``url`` recorded as its remote."""
    home, vault = tmp_path / f"home-{name}", tmp_path / f"vault-{name}"
    vault.mkdir(parents=True, exist_ok=True)
    remotes.save(home, vault.resolve(), remotes.Remote(url=url, **credentials))
    return vault, home


def open_vault(tmp_path: Path, name: str, url: str, **credentials: str) -> Memory:
    vault, home = attach(tmp_path, name, url, **credentials)
    return Memory.open(vault, home=home, origin=name, watch=False)


def observations(vault: Path, rel: str) -> list[str]:
    """Observation lines of the note at ``rel`` and of every conflict copy of it in ``vault``."""
    found = []
    files = [vault / rel] if (vault / rel).exists() else []
    conflict = vault / ".conflict"
    stem = rel[: -len(".md")]
    if conflict.is_dir():
        files += [
            p
            for p in conflict.rglob("*")
            if p.is_file() and p.relative_to(conflict).as_posix().startswith(stem + "__")
        ]
    for file in files:
        found += [line for line in file.read_text(encoding="utf-8").splitlines() if line.startswith("- [")]
    return found
