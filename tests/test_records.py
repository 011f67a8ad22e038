"""Files into index rows: the same index whether the files are read here or in worker processes."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from cairn import Memory, records, tokenize


def _fill(vault: Path, n: int) -> None:
    folder = vault / "user" / "notes"
    folder.mkdir(parents=True)
    for i in range(n):
        body = "\n".join(
            [
                "---",
                f"title: 笔记 {i} note",
                f"permalink: note-{i:03d}",
                f"tags: [t{i % 3}, 标签]",
                "---",
                "",
                "## Observations",
                f"- [fact] 第 {i} 条记录 about deployment number{i} #tag{i % 4}",
                f"- [idea] 相关想法 {i * 7} (上下文 {i})",
                "",
                "## Relations",
                f"- relates_to [[笔记 {(i + 1) % n} note]]",
            ]
        )
        (folder / f"n{i:03d}.md").write_text(body + "\n", encoding="utf-8")
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")


def _dump(index_path: str) -> dict[str, list[tuple]]:
    db = apsw.Connection(str(index_path))
    tables = {
        "notes": "SELECT path, permalink, title, tags, error, l.lines FROM notes n LEFT JOIN note_lines l ON l.note_id = n.id ORDER BY path",
        "tags": "SELECT n.path, t.tag FROM note_tags t JOIN notes n ON n.id = t.note_id ORDER BY 1, 2",
        "obs": "SELECT path, l.observations FROM notes n LEFT JOIN note_lines l ON l.note_id = n.id ORDER BY path",
        "rels": "SELECT n.path, r.line, r.type, r.target FROM relations r JOIN notes n ON n.id = r.note_id ORDER BY 1, 2, 4",
        "vocab": "SELECT term, doc, cnt FROM temp.vocab ORDER BY term",
        "term_df": "SELECT term, docs, private FROM term_df ORDER BY term",
    }
    db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab (main, notes_fts, 'row')")
    out = {name: db.execute(sql).fetchall() for name, sql in tables.items()}
    db.close()
    return out


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="worker processes are used only with two or more CPUs")
def test_worker_processes_build_the_same_index_as_one_process(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(vault, 60)
    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        monkeypatch.setattr(records, "PARALLEL_AFTER", 10**9)
        serial_report = mem.reindex()
        serial = _dump(mem.status()["index"])
        serial_hits = [
            (h.permalink, h.line) for h in mem.search("deployment 记录", limit=20, granularity="line")
        ]

        forked: list[int] = []
        real_pool = records._forked_pool

        def counting_pool(workers: int):
            pool = real_pool(workers)
            forked.append(pool is not None)
            return pool

        monkeypatch.setattr(records, "PARALLEL_AFTER", 10)
        monkeypatch.setattr(records, "_forked_pool", counting_pool)
        parallel_report = mem.reindex()
        parallel = _dump(mem.status()["index"])
        parallel_hits = [
            (h.permalink, h.line) for h in mem.search("deployment 记录", limit=20, granularity="line")
        ]

    assert forked and all(forked), "the parallel path was not taken"
    assert parallel_report == serial_report
    assert parallel_report.added == 61 and [d.path for d in parallel_report.damaged] == [
        "user/notes/broken.md"
    ]
    assert parallel == serial
    assert parallel_hits == serial_hits and len(serial_hits) == 20


def test_a_file_that_vanishes_before_it_is_read_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    st = records.FileStat("user/gone.md", 10, 1)
    assert records.read_record(tmp_path, st, 1, None) is None  # type: ignore[arg-type]


def test_observations_are_kept_with_their_line_category_tags_and_context(memory: Memory) -> None:
    note = memory.write(
        "Trip",
        observations=["[plan] 去杭州 #travel (五月)", "[secret] door code hint #sensitive"],
        body="Free text, not an observation.",
    )
    db = apsw.Connection(str(memory.status()["index"]))
    (stored,) = db.execute(
        "SELECT l.observations FROM notes n JOIN note_lines l ON l.note_id = n.id WHERE n.permalink = ?",
        (note.permalink,),
    ).fetchone()
    db.close()
    expected = [
        [o.line, o.category, list(o.tags), o.context, int("sensitive" in o.tags)] for o in note.observations
    ]
    assert records.unpack_observations(stored) == expected
    assert [row[1:4] for row in expected] == [["plan", ["travel"], "五月"], ["secret", ["sensitive"], None]]


def test_a_notes_lines_are_kept_with_their_numbers_and_which_are_sensitive(memory: Memory) -> None:
    # Written by hand: a lone carriage return or a U+2028 inside a line does not end it.
    text = "\n".join(
        [
            "---",
            "title: 门禁",
            "---",
            "第一段：物业电话 0571-8888",
            "",
            "  indented   text  ",
            "## Observations",
            "- [fact] 大门密码在抽屉里 #sensitive",
            "- [fact] tab\there, a\rreturn and a\u2028separator",
        ]
    )
    path = Path(memory.vault, "user", "门禁.md")
    path.write_text(text, encoding="utf-8", newline="")
    memory.refresh()
    db = apsw.Connection(str(memory.status()["index"]))
    (stored,) = db.execute(
        "SELECT l.lines FROM notes n JOIN note_lines l ON l.note_id = n.id WHERE n.path = ?",
        ("user/门禁.md",),
    ).fetchone()
    db.close()
    assert records.unpack_lines(stored) == [
        (4, "第一段：物业电话 0571-8888", False),
        (6, "indented   text", False),
        (8, "- [fact] 大门密码在抽屉里 #sensitive", True),
        (9, "- [fact] tab\there, a\rreturn and a\u2028separator", False),
    ]


def test_a_touched_file_with_the_same_bytes_is_not_parsed_again(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = memory.write("Touched", observations=["[a] same bytes"])
    path = memory.vault / note.path
    parsed: list[str] = []
    real = records.note_record

    def counting(path: str, *args, **kwargs):
        parsed.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(records, "note_record", counting)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    report = memory.refresh()
    assert parsed == [] and report.unchanged == 1 and report.updated == 0
    path.write_text(path.read_text(encoding="utf-8") + "- [b] new line\n", encoding="utf-8")
    report = memory.refresh()
    assert parsed == [note.path] and report.updated == 1


def _die(*args: object) -> None:
    os._exit(3)  # a worker killed (out of memory, say), as the pool sees it


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="worker processes are used only with two or more CPUs")
def test_a_worker_that_dies_leaves_the_work_to_this_process(
    vault: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(vault, 30)
    monkeypatch.setattr(records, "PARALLEL_AFTER", 10)
    monkeypatch.setattr(records, "_read_chunk", _die)
    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        report = mem.reindex()
        assert report.added == 31 and len(report.damaged) == 1
        assert [h.title for h in mem.search("笔记 7 note", limit=1)] == ["笔记 7 note"]


def _token_counts(index_path: str) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """The notes per token as the index keeps them, and as FTS5 counts them from its doclists."""
    db = apsw.Connection(str(index_path))
    db.execute("CREATE VIRTUAL TABLE temp.by_row USING fts5vocab (main, notes_fts, 'row')")
    db.execute("CREATE VIRTUAL TABLE temp.by_col USING fts5vocab (main, notes_fts, 'col')")
    private = dict(db.execute("SELECT term, doc FROM temp.by_col WHERE col = 'private'").fetchall())
    truth = {
        term: (doc, private.get(term, 0)) for term, doc in db.execute("SELECT term, doc FROM temp.by_row")
    }
    kept = {term: (docs, priv) for term, docs, priv in db.execute("SELECT term, docs, private FROM term_df")}
    db.close()
    return kept, truth


def test_notes_per_token_follow_every_change_as_fts5_counts_them(vault: Path, isolated_home: Path) -> None:
    _fill(vault, 30)
    folder = vault / "user" / "notes"
    word = {
        w: tokenize.tokens(w, stem=tokenize.STEM_ENGLISH)[0]
        for w in ("deployment", "rollout", "combination", "zygote")
    }
    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        mem.reindex()  # every file new: recounted from FTS5 at the end
        kept, truth = _token_counts(mem.index_path)
        assert kept == truth and truth[word["deployment"]] == (30, 0)

        # A few files changed: counted file by file.
        mem.write("新的笔记", observations=["[fact] deployment 第二次 zygote"])
        edited = folder / "n001.md"
        edited.write_text(
            edited.read_text(encoding="utf-8").replace("deployment", "rollout")
            + "- [secret] 保险柜 combination #sensitive\n",
            encoding="utf-8",
        )
        (folder / "n002.md").unlink()
        (folder / "n003.md").write_text("---\ntitle: [broken\n---\n", encoding="utf-8")
        (folder / "broken.md").write_text(
            "---\ntitle: Mended\n---\n\n- [fact] mended zygote\n", encoding="utf-8"
        )
        report = mem.refresh()
        assert (report.removed, len(report.damaged)) == (1, 1)
        kept, truth = _token_counts(mem.index_path)
        assert kept == truth
        assert truth[word["deployment"]] == (28, 0) and truth[word["rollout"]] == (1, 0)
        assert truth[word["combination"]] == (1, 1) and truth[word["zygote"]] == (2, 0)

        # Many new files at once: recounted again, over the counts already kept.
        for i in range(20):
            (folder / f"extra{i}.md").write_text(
                f"# Extra {i}\n\n- [fact] zygote number{i}\n", encoding="utf-8"
            )
        assert mem.refresh().added == 20
        kept, truth = _token_counts(mem.index_path)
        assert kept == truth and truth[word["zygote"]] == (22, 0)


def test_term_weights_count_the_notes_not_the_ids_edits_used_up(memory: Memory) -> None:
    note = memory.write("Often edited", observations=["[a] first quasar"])
    memory.write("Other", observations=["[a] second quasar"])
    for i in range(6):  # every rewrite gives the note a new row id
        memory.edit(note.permalink, find="first" if i == 0 else f"edit{i - 1}", replace=f"edit{i}")
    from cairn.search.vocabulary import IndexVocabulary

    stats = IndexVocabulary(memory._index).term_stats(["quasar", "edit5"])
    assert (stats.notes, stats.docs, stats.public) == (
        2,
        {"quasar": 2, "edit5": 1},
        {"quasar": 2, "edit5": 1},
    )


def _side_rowids(index_path: str, path: str) -> dict[str, list[int]]:
    db = apsw.Connection(str(index_path))
    (note_id,) = db.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
    out = {
        table: [
            r
            for (r,) in db.execute(f"SELECT rowid FROM {table} WHERE note_id = ? ORDER BY rowid", (note_id,))
        ]
        for table in ("note_tags", "relations", "supersedes")
    }
    out["note"] = [note_id]
    db.close()
    return out


def test_edits_leave_the_index_as_a_rebuild_would_and_keep_rows_that_did_not_change(
    vault: Path, isolated_home: Path
) -> None:
    _fill(vault, 12)
    folder = vault / "user" / "notes"
    with Memory.open(vault, home=isolated_home, watch=False) as mem:
        mem.reindex()
        body_only = "user/notes/n004.md"
        before = _side_rowids(mem.index_path, body_only)
        (vault / body_only).write_text(
            (vault / body_only).read_text(encoding="utf-8") + "- [fact] 只改了正文 appended\n",
            encoding="utf-8",
        )
        n5 = folder / "n005.md"  # tags, relations and a supersedes change
        n5.write_text(
            n5.read_text(encoding="utf-8")
            .replace("tags: [t2, 标签]", "tags: [新标签]\nsupersedes: [note-001]")
            .replace("relates_to [[笔记 6 note]]", "depends_on [[笔记 9 note]]"),
            encoding="utf-8",
        )
        (folder / "n006.md").write_text("---\ntitle: [broken\n---\n", encoding="utf-8")  # fine -> damaged
        (folder / "broken.md").write_text(
            "---\ntitle: 修好了\ntags: [a]\n---\n\n- [fact] mended\n", encoding="utf-8"
        )
        n7 = folder / "n007.md"  # front matter only: FTS5 columns unchanged
        n7.write_text(
            n7.read_text(encoding="utf-8").replace("---\n\n", "extra: 1\n---\n\n", 1), encoding="utf-8"
        )
        report = mem.refresh()
        assert report.updated == 5
        after = _side_rowids(mem.index_path, body_only)
        edited = _dump(mem.index_path)
        hits = [
            (h.permalink, h.line)
            for h in mem.search("新标签 mended 只改了正文 depends", limit=20, granularity="line")
        ]

        mem.reindex()
        rebuilt = _dump(mem.index_path)
        assert hits == [
            (h.permalink, h.line)
            for h in mem.search("新标签 mended 只改了正文 depends", limit=20, granularity="line")
        ]
    assert edited == rebuilt
    assert after == before and after["note_tags"] and after["relations"]
    assert ("user/notes/n005.md", "新标签") in edited["tags"]
    assert [r for r in edited["rels"] if r[0] == "user/notes/n005.md"] == [
        ("user/notes/n005.md", 13, "depends_on", "笔记 9 note")
    ]
