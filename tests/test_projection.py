"""The projection: sections in order, cut at inject_char_cap with a visible closing line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app


def _section(vault: Path, name: str, title: str, order: int | None, body: str, extra: str = "") -> None:
    folder = vault / "user" / "sections"
    folder.mkdir(parents=True, exist_ok=True)
    order_line = f"order: {order}\n" if order is not None else ""
    (folder / f"{name}.md").write_text(
        f"---\ntitle: {title}\n{order_line}{extra}---\n\n# {title}\n\n{body}\n", encoding="utf-8"
    )


def test_sections_in_order_without_their_headings_twice(memory: Memory, vault: Path) -> None:
    _section(vault, "work", "工作", 2, "- 用 Python 写后端")
    _section(vault, "prefs", "Preferences", 1, "- tea, not coffee")
    _section(vault, "misc", "Misc", None, "- last, having no order")
    result = memory.projection()
    assert result["text"] == (
        "## Preferences\n\n- tea, not coffee\n\n## 工作\n\n- 用 Python 写后端\n\n## Misc\n\n- last, having no order\n"
    )
    assert result["truncated"] is False and result["cap"] == 6000
    assert result["sections"] == ["prefs", "work", "misc"]


def test_sensitive_sections_never_appear(memory: Memory, vault: Path) -> None:
    _section(vault, "health", "Health", 1, "- allergy to penicillin", extra="sensitivity: sensitive\n")
    _section(vault, "prefs", "Preferences", 2, "- tea")
    text = memory.projection()["text"]
    assert "penicillin" not in text and "tea" in text


def test_cut_at_the_cap_with_a_closing_line_naming_the_rest(vault: Path, isolated_home: Path) -> None:
    vault.mkdir(parents=True)
    (vault / "cairn.toml").write_text("inject_char_cap = 400\n", encoding="utf-8")
    _section(vault, "a", "A", 1, "\n".join(f"- fact a{i}" for i in range(10)))
    _section(vault, "b", "B", 2, "\n".join(f"- 事实 b{i} " + "很长" * 10 for i in range(20)))
    _section(vault, "c", "C", 3, "- never shown")
    with Memory.open(vault, home=isolated_home) as mem:
        result = mem.projection()
    text = result["text"]
    assert result["truncated"] is True and result["cap"] == 400
    assert len(text) <= 400 and result["chars"] == len(text)
    assert "- fact a9" in text and "never shown" not in text
    last = text.rstrip("\n").split("\n")[-1]
    assert "memory_read" in last and "user/sections/b.md" in last and "user/sections/c.md" in last
    assert result["omitted"] == ["user/sections/b.md", "user/sections/c.md"]
    # Whole lines only: no line of b is cut in the middle.
    for line in text.split("\n"):
        if line.startswith("- 事实"):
            assert line.endswith("很长")


def test_cli_and_empty_vault(memory: Memory, vault: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["projection", "--json"])
    assert json.loads(empty.stdout)["text"] == ""
    _section(vault, "prefs", "Preferences", 1, "- tea")
    shown = runner.invoke(app, ["projection"])
    assert shown.exit_code == 0 and shown.stdout == "## Preferences\n\n- tea\n"
