"""Export and import: the cairn-export document, other tools' folders, mem0's JSON."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn import Memory
from cairn.cli import app
from cairn.errors import AlreadyExists, InvalidInput, SecretRefused
from cairn.portable.export import export
from cairn.portable.importing import import_source

runner = CliRunner()


def _fill(mem: Memory) -> None:
    mem.write(
        "数据结构（2026 秋）",
        folder="courses/大二上",
        type="course",
        tags=["课程", "大二上"],
        body="讲得快，坐前排。见 [[线性代数]]。",
        observations=["[teacher] 邓俊辉 #重要 (讲得快)", "[exam] 期中闭卷 #sensitive"],
        relations=["belongs_to [[我的课表 2026 秋]]", '"relates to" [[OH-Memory 使用记录]]'],
        fields={"course_code": "30240243", "credits": 3.5, "status": {"active": True, "rank": [1, 2]}},
    )
    mem.write("Health notes", body="private", sensitivity="sensitive")
    mem.write("Plain English note", body="Nothing special.\n\n---\n\nAfter a rule.")
    mem.journal("一条日记")
    # A note made by hand: no front matter, CRLF line endings.
    (mem.vault / "user" / "hand made.md").write_bytes(b"# Hand made\r\n\r\n- [fact] typed by hand\r\n")


def _other(tmp_path: Path, name: str) -> Memory:
    return Memory.open(tmp_path / name / "vault", home=tmp_path / name / "state", origin="elsewhere")


def _without_time(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "exported"}


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _doc_file(tmp_path: Path, doc: dict, name: str = "doc.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


# -- round trip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sensitive", [True, False])
def test_export_import_into_an_empty_vault_and_export_again_is_the_same(
    memory: Memory, tmp_path: Path, sensitive: bool
) -> None:
    _fill(memory)
    first = export(memory, include_sensitive=sensitive)
    with _other(tmp_path, "b") as other:
        report = import_source(other, _doc_file(tmp_path, first.document))
        assert {n["status"] for n in report.notes} == {"new"}
        second = export(other, include_sensitive=sensitive)
        course = other.read("user/courses/大二上/数据结构（2026 秋）.md")
        again = import_source(other, _doc_file(tmp_path, first.document))
    assert _without_time(second.document) == _without_time(first.document)
    assert [n["status"] for n in again.notes] == ["same"] * len(first.document["notes"])
    original = memory.read("user/courses/大二上/数据结构（2026 秋）.md")
    for name in ("created", "modified", "permalink", "origin"):  # not stamped anew by the import
        assert course.frontmatter[name] == original.frontmatter[name]
    assert course.frontmatter["status"] == {"active": True, "rank": [1, 2]}
    paths = [n["path"] for n in first.document["notes"]]
    assert ("Health notes.md" in paths) is sensitive
    record = next(n for n in first.document["notes"] if n["path"].startswith("courses/"))
    assert record["scope"] == "user" and record["title"] == "数据结构（2026 秋）"
    assert ("期中闭卷" in record["body"]) is sensitive
    assert {"type": "belongs_to", "target": "我的课表 2026 秋", "context": None, "inline": False} in record[
        "relations"
    ]
    assert [o["category"] for o in record["observations"]] == ["teacher", "exam"][: 2 if sensitive else 1]
    flat = json.dumps(first.document, ensure_ascii=False)
    assert "sha256:" not in flat and '"line"' not in flat and '"version": "' not in flat
    hand = next(n for n in first.document["notes"] if n["path"] == "hand made.md")
    assert hand["frontmatter"] == {} and hand["body"].startswith("# Hand made\r\n")


def test_damaged_files_are_not_exported_and_are_named(memory: Memory, tmp_path: Path) -> None:
    memory.write("Fine", body="ok")
    (memory.vault / "user" / "broken.md").write_text("---\ntitle: [broken\n---\n", encoding="utf-8")
    done = export(memory)
    assert [n["path"] for n in done.document["notes"]] == ["Fine.md"]
    assert [d.path for d in done.skipped] == ["user/broken.md"]
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["--vault", str(memory.vault), "export", "--out", str(out)])
    assert result.exit_code == 0
    assert "skipped: user/broken.md: front matter is not valid YAML" in result.stderr
    assert "exported 1 notes" in result.stdout and json.loads(out.read_text(encoding="utf-8"))["version"] == 1


def test_export_of_chosen_scopes(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "v", home=tmp_path / "s", allow_scopes=["user", "agent:bot"]) as mem:
        mem.write("Mine", body="x")
        mem.write("Bot's", body="y", scope="agent:bot")
        assert [n["scope"] for n in export(mem, ["agent:bot"]).document["notes"]] == ["agent:bot"]
        assert [n["scope"] for n in export(mem).document["notes"]] == ["agent:bot", "user"]


# -- validation -----------------------------------------------------------------------------------


def test_a_bad_document_names_its_first_bad_record_and_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    _fill(memory)
    doc = export(memory, include_sensitive=True).document
    course = next(i for i, n in enumerate(doc["notes"]) if n["path"].startswith("courses/"))
    with _other(tmp_path, "b") as other:
        cases = [
            (lambda d: d["notes"][2].pop("title"), "notes[2].title: missing"),
            (lambda d: d.update(version=2), "version: 2 is not a version this Cairn reads"),
            (lambda d: d["notes"][1].update(path="../escape.md"), "notes[1].path:"),
            (lambda d: d["notes"][1].update(path=".trash/x.md"), "notes[1].path:"),
            (lambda d: d["notes"][3].update(title="Another title"), "notes[3].title:"),
            (lambda d: d["notes"][course]["observations"].pop(), f"notes[{course}].observations: differ"),
            (lambda d: d["notes"][2].update(colour="red"), "notes[2].colour: unknown field"),
            (
                lambda d: d["notes"][4]["frontmatter"].update(created=float("nan")),
                "notes[4].frontmatter.created",
            ),
            (lambda d: d["notes"].append(dict(d["notes"][0])), f"notes[{len(doc['notes'])}].path: same file"),
        ]
        for spoil, message in cases:
            bad = json.loads(json.dumps(doc))
            spoil(bad)
            path = tmp_path / "bad.json"
            path.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
            with pytest.raises(InvalidInput) as caught:
                import_source(other, path)
            assert message in caught.value.message, (message, caught.value.message)
        secret = json.loads(json.dumps(doc))
        secret["notes"][2]["body"] += "\napi_key: sk-proj-Abc123Def456Ghi789Jkl012Mno345\n"
        with pytest.raises(SecretRefused, match=r"^notes\[2\]: refused"):
            import_source(other, _doc_file(tmp_path, secret))
        assert _tree(other.vault) == {}
    result = runner.invoke(app, ["--vault", str(tmp_path / "c"), "import", str(tmp_path / "bad.json")])
    assert result.exit_code == InvalidInput.exit_code
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"format": "cairn-export",', encoding="utf-8")
    with pytest.raises(InvalidInput, match="not JSON .* line 1"):
        import_source(memory, garbage)


def test_dry_run_says_new_same_changed_and_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    memory.write("Kept", body="same")
    memory.write("Edited", body="before")
    memory.write("Brand new", body="new")
    doc = export(memory).document
    with _other(tmp_path, "b") as other:
        import_source(other, _doc_file(tmp_path, {**doc, "notes": doc["notes"][:2]}))  # Brand new, Edited
        other.edit("Edited", "before", "after")
        before = _tree(other.vault)
        report = import_source(other, _doc_file(tmp_path, doc), dry_run=True)
        statuses = {n["path"]: n["status"] for n in report.notes}
        assert statuses == {"user/Brand new.md": "same", "user/Edited.md": "changed", "user/Kept.md": "new"}
        assert report.counts() == {"new": 1, "same": 1, "changed": 1, "conflict": 0}
        assert _tree(other.vault) == before
        with pytest.raises(AlreadyExists, match="different note is already at user/Edited.md"):
            import_source(other, _doc_file(tmp_path, doc))
        assert _tree(other.vault) == before  # not even the new note
        done = import_source(other, _doc_file(tmp_path, doc), replace=True)
        assert {n["path"]: n["status"] for n in done.notes} == statuses
        assert other.read("Edited").body == memory.read("Edited").body
    cli = runner.invoke(
        app,
        [
            "--vault",
            str(tmp_path / "b" / "vault"),
            "import",
            str(tmp_path / "doc.json"),
            "--dry-run",
            "--json",
        ],
    )
    assert cli.exit_code == 0 and json.loads(cli.stdout)["counts"]["same"] == 3


def test_import_refuses_a_permalink_another_note_holds(memory: Memory, tmp_path: Path) -> None:
    note = memory.write("Original", body="x")
    doc = export(memory).document
    doc["notes"][0]["path"] = "moved/Original.md"
    with _other(tmp_path, "b") as other:
        import_source(other, _doc_file(tmp_path, export(memory).document))
        with pytest.raises(AlreadyExists, match=f"already has permalink '{note.permalink}'"):
            import_source(other, _doc_file(tmp_path, doc), replace=True)


# -- other tools ----------------------------------------------------------------------------------


def _basic_memory_project(root: Path, outside: Path) -> None:
    (root / "specs").mkdir(parents=True)
    (root / ".basic-memory").mkdir()
    (root / ".basic-memory" / "config.md").write_text("# not a note\n", encoding="utf-8")
    (root / "specs" / "search-design.md").write_text(
        "---\ntitle: Search Design\ntype: spec\npermalink: specs/search-design\ntags:\n- search\n- 设计\n"
        "custom_field: keep me\n---\n\n# Search Design\n\n## Observations\n- [decision] 用 FTS5 #search (快)\n\n"
        "## Relations\n- implements [[Search Spec]]\n",
        encoding="utf-8",
    )
    (root / "会议记录.md").write_text(
        "---\ntitle: 会议记录\ntype: note\n---\n\n周一开会。\n", encoding="utf-8"
    )
    os.utime(root / "会议记录.md", (1_793_000_000, 1_793_000_000))  # 2026-10-26
    (root / "damaged.md").write_text("---\ntitle: {oops\n---\n", encoding="utf-8")
    (root / "latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    outside.mkdir()
    (outside / "secret-plans.md").write_text("---\ntitle: Outside\n---\nnot yours\n", encoding="utf-8")
    (root / "link.md").symlink_to(outside / "secret-plans.md")
    (root / "linked-folder").symlink_to(outside, target_is_directory=True)


def test_a_basic_memory_project_is_imported_without_touching_it(memory: Memory, tmp_path: Path) -> None:
    project, outside = tmp_path / "bm", tmp_path / "outside"
    _basic_memory_project(project, outside)
    before = _tree(project)
    dry = import_source(memory, project, kind="basic-memory", dry_run=True)
    assert [n["status"] for n in dry.notes] == ["new", "new"] and memory.list() == []
    report = import_source(memory, project, kind="basic-memory")
    assert _tree(project) == before
    assert sorted(n["path"] for n in report.notes) == ["user/specs/search-design.md", "user/会议记录.md"]
    skipped = {s.source: s.reason for s in report.skipped}
    assert set(skipped) == {"damaged.md", "latin1.md", "link.md", "linked-folder"}
    assert "symbolic link" in skipped["link.md"] and "UTF-8" in skipped["latin1.md"]
    note = memory.read("specs/search-design")
    assert note.frontmatter["custom_field"] == "keep me" and note.type == "spec"
    assert note.observations[0].content == "用 FTS5" and note.relations[0].target == "Search Spec"
    assert memory.search("FTS5")[0].permalink == "specs/search-design"
    assert memory.search("not yours") == [] and not any("Outside" in n.title for n in memory.list())
    meeting = memory.read("会议记录")  # no dates in the file: its mtime stands in
    assert meeting.frontmatter["created"] == meeting.frontmatter["modified"]
    assert meeting.frontmatter["created"].startswith("2026-10-26T")
    again = import_source(memory, project, kind="basic-memory")
    assert [n["status"] for n in again.notes] == ["same", "same"]


def test_an_obsidian_vault_is_imported(memory: Memory, tmp_path: Path) -> None:
    root = tmp_path / "Obsidian Vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "workspace.md").write_text("# settings\n", encoding="utf-8")
    (root / ".trash").mkdir()
    (root / ".trash" / "old.md").write_text("# deleted\n", encoding="utf-8")
    (root / "Daily").mkdir()
    (root / "Daily" / "2026-11-04.md").write_text("Met [[Alice|alice]] about #project-x.\n", encoding="utf-8")
    (root / "Ideas.md").write_text(
        "---\naliases: [点子]\ntags: idea\n---\n# Ideas\n- [idea] 记忆导出\n", encoding="utf-8"
    )
    (root / "image.png").write_bytes(b"\x89PNG")
    os.utime(root / "Daily" / "2026-11-04.md", (1_793_000_000, 1_793_000_000))
    before = _tree(root)
    with Memory.open(memory.vault, home=memory.home, origin="test", allow_scopes=["agent:obs"]) as mem:
        report = import_source(mem, root, kind="obsidian", scope="agent:obs")
        daily = mem.read("agent-obs/Daily/2026-11-04.md")
        ideas = mem.read("Ideas")
    assert _tree(root) == before and report.skipped == []
    assert sorted(n["path"] for n in report.notes) == ["agent-obs/Daily/2026-11-04.md", "agent-obs/Ideas.md"]
    assert daily.title == "2026-11-04" and daily.relations[0].target == "Alice"
    assert daily.frontmatter["created"] == daily.frontmatter["modified"] and daily.created.startswith(
        "2026-10-26"
    )
    assert ideas.frontmatter["aliases"] == ["点子"] and ideas.tags == ("idea",)


MEM0 = {
    "results": [
        {
            "id": "a1",
            "memory": "Dev works at TechCorp as a senior engineer",
            "hash": "x",
            "created_at": "2026-07-20T01:02:03-07:00",
            "updated_at": "2026-07-21T01:02:03-07:00",
            "user_id": "dev",
            "metadata": {"type": "professional"},
        },
        {
            "id": "a2",
            "memory": "喜欢\n早上开会",
            "created_at": "2026-07-19T08:00:00+08:00",
            "user_id": "dev",
            "categories": ["preferences", "work habits"],
        },
        {
            "id": "b1",
            "memory": "Prefers async updates",
            "agent_id": "helper",
            "created_at": "2026-07-01T00:00:00Z",
        },
        {"id": "c1", "memory": "password: hunter2xyz", "user_id": "dev"},
        {"id": "d1", "memory": "   ", "user_id": "dev"},
    ]
}


@pytest.mark.parametrize("shape", ["results", "list"])
def test_mem0_memories_become_observations_one_note_per_owner(
    memory: Memory, tmp_path: Path, shape: str
) -> None:
    path = _doc_file(tmp_path, MEM0 if shape == "results" else MEM0["results"], "mem0.json")
    report = import_source(memory, path, kind="mem0")
    assert sorted(s.source for s in report.skipped) == ["results[3] c1", "results[4]"]
    dev = memory.read("mem0 memories of user dev")
    assert [(o.category, o.content, o.tags) for o in dev.observations] == [
        ("preferences", "喜欢 早上开会", ("work-habits",)),
        ("professional", "Dev works at TechCorp as a senior engineer", ()),
    ]
    assert dev.observations[1].context == "mem0 a1 · 2026-07-20T01:02:03-07:00"
    assert dev.frontmatter["created"] == "2026-07-19T08:00:00+08:00" and dev.origin == "mem0"
    assert memory.read("mem0 memories of agent helper").observations[0].content == "Prefers async updates"
    assert memory.search("早上开会")[0].permalink == dev.permalink
    again = import_source(memory, path, kind="mem0")
    assert [n["status"] for n in again.notes] == ["same", "same"]


def test_cli_import_from_folders_and_json_output(tmp_path: Path) -> None:
    project = tmp_path / "bm"
    _basic_memory_project(project, tmp_path / "outside")
    vault = ["--vault", str(tmp_path / "v")]
    shown = runner.invoke(app, [*vault, "import", "--from", "basic-memory", str(project)])
    assert shown.exit_code == 0, shown.output
    assert "imported: 2 new; 4 skipped" in shown.stdout and "skipped: link.md:" in shown.stderr
    again = runner.invoke(app, [*vault, "import", "--from", "basic-memory", str(project), "--json"])
    data = json.loads(again.stdout)
    assert data["counts"]["same"] == 2 and data["from"] == "basic-memory" and len(data["skipped"]) == 4
    wrong = runner.invoke(app, [*vault, "import", "--from", "notion", str(project)])
    assert wrong.exit_code == InvalidInput.exit_code and "choose one of" in wrong.stderr
    exported = runner.invoke(app, [*vault, "export", "--json"])
    assert exported.exit_code == 0 and len(json.loads(exported.stdout)["notes"]) == 2
