"""basic-memory beside Cairn: the same generated notes, the same queries, the same machine.

basic-memory (PyPI ``basic-memory``) needs Python >= 3.12. It is installed once into its own
venv under ``benchmarks/.work/peer-venv`` and run only through that venv's interpreter (its CLI
``bm`` and a small driver script), with a throwaway HOME and config folder, on a *copy* of the
vault (its indexing may rewrite files). Its telemetry, analytics, promos and update checks are
switched off through its own settings (see ``peer_env``), so nothing is sent anywhere.

Run with ``python -m benchmarks --only peers`` or ``make bench BENCH_ARGS=--peers``;
``--peer-notes N`` sets the vault size (300 by default: basic-memory indexes a few notes a second).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO, md_table, percentile
from .vaultgen import GenNote, generate, queries

PEER_PACKAGE = "basic-memory==0.24.1"
PEER_VENV = REPO / "benchmarks" / ".work" / "peer-venv"
STAMP = PEER_VENV / ".bench-installed"
CAIRN_CLI = REPO / ".venv" / "bin" / "cairn"
SEED = 20261130
PROJECT = "bench"
TOP = 5

# Runs inside the peer venv: times basic-memory's own search tool (the coroutine its CLI
# `bm tool search-notes` and its MCP server call) in one process and event loop.
DRIVER = r"""
import asyncio, json, sys, time

async def main(spec):
    t0 = time.perf_counter()
    from basic_memory.mcp.tools import search_notes
    import_s = time.perf_counter() - t0

    async def one(q):
        t = time.perf_counter()
        out = await search_notes(query=q, project=spec["project"], search_type="text",
                                 output_format="json", page=1, page_size=10)
        return time.perf_counter() - t, out

    first_s, _ = await one(spec["queries"][0])
    for q in spec["queries"][:3]:
        await one(q)
    lat, top, errors = [], [], []
    for q in spec["queries"]:
        t, out = await one(q)
        lat.append(t)
        if isinstance(out, str):
            errors.append(out[:200])
            top.append([])
            continue
        notes = []
        for r in out.get("results", []):
            key = r.get("entity") or r.get("permalink") or r.get("file_path") or ""
            key = key.split("/", 1)[0]
            if key and key not in notes:
                notes.append(key)
        top.append(notes)
    return {"import_s": import_s, "first_s": first_s, "lat": lat, "top": top, "errors": errors}

spec = json.load(open(sys.argv[1], encoding="utf-8"))
print("@@JSON@@" + json.dumps(asyncio.run(main(spec))))
"""


VECTOR_PROBE = (
    "from basic_memory.repository.semantic_runtime import sqlite_vector_runtime_available as f; print(f())"
)


class PeerError(Exception):
    """A step of the peer run failed; the message carries the step and the error's last lines."""


def _tail(text: str | bytes | None, n: int = 15) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join((text or "").strip().splitlines()[-n:])


def _run(cmd: list[str], step: str, timeout: float, **kw) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as exc:
        raise PeerError(f"{step}: timed out after {timeout:.0f} s\n{_tail(exc.stderr)}") from exc
    except OSError as exc:
        raise PeerError(f"{step}: {exc}") from exc
    if proc.returncode != 0:
        raise PeerError(f"{step}: exit {proc.returncode}\n{_tail(proc.stderr) or _tail(proc.stdout)}")
    return proc


def _timed_run(cmd: list[str], step: str, timeout: float, **kw) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = _run(cmd, step, timeout, **kw)
    return time.perf_counter() - t0, proc


def find_python312() -> tuple[str | None, list[str]]:
    """A working interpreter >= 3.12 (PATH, then pyenv's versions folder), and what was tried."""
    cands = [shutil.which(f"python3.{m}") for m in (12, 13, 14)]
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    for pattern in ("3.12*", "3.13*", "3.14*"):
        cands += sorted(glob.glob(os.path.join(pyenv_root, "versions", pattern, "bin", "python3")))
    tried = []
    for c in dict.fromkeys(x for x in cands if x):
        try:
            out = subprocess.run(
                [c, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            out = None
        if out is not None and out.returncode == 0 and out.stdout.strip() == "True":
            return c, tried
        tried.append(c)  # e.g. a pyenv shim for a version that is not active
    return None, tried


def ensure_peer_venv(python: str) -> Path:
    """Create the peer venv and install basic-memory once; return the venv's python."""
    py = PEER_VENV / "bin" / "python"
    if not py.exists():
        _run([python, "-m", "venv", str(PEER_VENV)], "creating the peer venv", 300)
    if not STAMP.exists() or STAMP.read_text().strip() != PEER_PACKAGE:
        print(f"[peers] pip install {PEER_PACKAGE} into {PEER_VENV} ...", file=sys.stderr, flush=True)
        _run(
            [str(py), "-m", "pip", "install", "--quiet", PEER_PACKAGE],
            f"pip install {PEER_PACKAGE}",
            1800,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        STAMP.write_text(PEER_PACKAGE + "\n")
    return py


def peer_env(root: Path) -> dict[str, str]:
    """Environment for every basic-memory process: private HOME and config, nothing sent out."""
    home = root / "bm-home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "BASIC_MEMORY_CONFIG_DIR": str(root / "bm-config"),  # config.json, memory.db, logs
        "BASIC_MEMORY_NO_PROMOS": "1",  # Umami CLI analytics and cloud promos off
        "BASIC_MEMORY_AUTO_UPDATE": "false",  # no PyPI / brew update check or self-upgrade
        "BASIC_MEMORY_LOGFIRE_ENABLED": "false",  # Logfire telemetry (off by default; made explicit)
        "BASIC_MEMORY_LOGFIRE_SEND_TO_LOGFIRE": "false",
        "LOGFIRE_SEND_TO_LOGFIRE": "false",
        "BASIC_MEMORY_CLOUD_MODE": "false",
        "BASIC_MEMORY_FORCE_LOCAL": "true",  # local ASGI transport, never the cloud API
        "HF_HUB_OFFLINE": "1",  # never fetch an embedding model
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "FASTEMBED_CACHE_PATH": str(root / "bm-fastembed"),
        "DO_NOT_TRACK": "1",
    }


def write_peer_config(root: Path, vault: Path) -> None:
    cfg = root / "bm-config"
    cfg.mkdir(exist_ok=True)
    config = {
        "projects": {PROJECT: {"path": str(vault)}},
        "default_project": PROJECT,
        "auto_update": False,
        "cloud_promo_opt_out": True,
        "logfire_enabled": False,
        "default_search_type": "text",
    }
    (cfg / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _bytes(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def _ms(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 10 else f"{s:.1f} s"


def _lat(v: list[float]) -> str:
    return f"p50 {percentile(v, 50) * 1000:.1f} / p95 {percentile(v, 95) * 1000:.1f} ms"


def _ratio(peer: float | None, ours: float | None) -> str:
    """``peer / ours`` (basic-memory's figure over Cairn's)."""
    if not peer or not ours:
        return "—"
    r = peer / ours
    # Two significant figures below 1: a rate 200 times lower is 0.005x, not "0.00x".
    return f"{r:.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 1 else f"{r:.2g}x"


def measure_cairn(vault: Path, home: Path, qs: list[str], cli_qs: list[str]) -> dict:
    from cairn import Memory

    out: dict = {}
    before = _files(vault)
    mem = Memory.open(vault, home=home)
    try:
        index = mem.index_path  # not status(): it would index the vault before the timed build
        t0 = time.perf_counter()
        rep = mem.reindex()
        out["reindex_s"] = time.perf_counter() - t0
        out["indexed"] = rep.added
        for q in qs[:3]:
            mem.search(q, limit=10)
        lat, top = [], []
        for q in qs:
            t0 = time.perf_counter()
            hits = mem.search(q, limit=10)
            lat.append(time.perf_counter() - t0)
            top.append(list(dict.fromkeys(h.permalink for h in hits)))
        out["lat"], out["top"] = lat, top
    finally:
        mem.close()
    out["index_bytes"] = _bytes([Path(f"{index}{s}") for s in ("", "-wal", "-shm")])
    after = _files(vault)
    out["changed"] = sum(1 for k, v in before.items() if after.get(k) != v)
    env = {**os.environ, "CAIRN_VAULT": str(vault), "CAIRN_HOME": str(home)}
    out["cli"] = [
        _timed_run([str(CAIRN_CLI), "search", "--json", q], "cairn search", 120, env=env)[0] for q in cli_qs
    ]
    # The same cold build as a whole command, to set beside basic-memory's CLI figure.
    env2 = {**env, "CAIRN_HOME": str(home.parent / "cairn-home-cli")}
    out["reindex_cli_s"] = _timed_run([str(CAIRN_CLI), "reindex"], "cairn reindex", 600, env=env2)[0]
    return out


def measure_peer(py: Path, root: Path, vault: Path, qs: list[str], cli_qs: list[str]) -> dict:
    env = peer_env(root)
    write_peer_config(root, vault)
    bm = str(py.parent / "bm")
    out: dict = {}
    before = _files(vault)
    out["version"] = _run(
        [str(py), "-c", "import basic_memory; print(basic_memory.__version__)"],
        "import basic_memory",
        300,
        env=env,
    ).stdout.strip()
    out["vector"] = (
        _run([str(py), "-c", VECTOR_PROBE], "probing vector support", 300, env=env)
        .stdout.strip()
        .splitlines()[-1]
    )
    print(f"[peers] bm reindex of {len(before)} notes ...", file=sys.stderr, flush=True)
    out["reindex_s"], proc = _timed_run(
        [bm, "reindex", "--search", "-p", PROJECT], "bm reindex", 3600, env=env, cwd=root
    )
    out["reindex_out"] = next((x.strip() for x in proc.stdout.splitlines() if "observed" in x), "")
    after = _files(vault)
    out["changed"] = sorted(k for k in before if k in after and after[k] != before[k])
    out["added_files"] = sorted(set(after) - set(before))
    out["removed_files"] = sorted(set(before) - set(after))
    if out["changed"]:
        k = out["changed"][0]
        out["example_diff"] = (k, before[k][-120:], after[k][-120:])

    spec = root / "driver.json"
    spec.write_text(json.dumps({"project": PROJECT, "queries": qs}, ensure_ascii=False), encoding="utf-8")
    driver = root / "bm_driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    print(f"[peers] bm in-process search x {len(qs)} ...", file=sys.stderr, flush=True)
    proc = _run([str(py), str(driver), str(spec)], "bm in-process search", 1800, env=env, cwd=root)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("@@JSON@@")), None)
    if line is None:
        raise PeerError(f"bm in-process search: no result\n{_tail(proc.stdout)}\n{_tail(proc.stderr)}")
    out.update(json.loads(line[len("@@JSON@@") :]))

    print("[peers] bm tool search-notes (CLI) ...", file=sys.stderr, flush=True)
    cli_cmd = [bm, "tool", "search-notes", "--json"]
    out["cli"] = [
        _timed_run([*cli_cmd, q], "bm tool search-notes", 600, env=env, cwd=root)[0] for q in cli_qs
    ]
    out["cli_import_s"] = _timed_run(
        [str(py), "-c", "import basic_memory.cli.main"], "import basic_memory.cli.main", 300, env=env
    )[0]
    cfg = root / "bm-config"
    out["index_bytes"] = _bytes([cfg / f"memory.db{s}" for s in ("", "-wal", "-shm")])
    out["db_bytes"] = _bytes([cfg / "memory.db"])
    out["changed_end"] = sum(1 for k, v in _files(vault).items() if k in before and before[k] != v)
    return out


def _overlap(a: list[str], b: list[str]) -> float:
    a, b = a[:TOP], b[:TOP]
    if not a and not b:
        return float("nan")
    return len(set(a) & set(b)) / max(len(a), len(b))


def render(
    n: int,
    vault_bytes: int,
    qs: list[str],
    cairn: dict,
    peer: dict | None,
    error: str | None,
    skipped: str | None,
) -> str:
    head = [f"## Peers: basic-memory beside Cairn ({n} notes, {len(qs)} queries)", ""]
    if skipped:
        head += [f"Peer run skipped: {skipped}", ""]
    if error:
        head += ["basic-memory run failed; Cairn's figures alone:", "", "```", error.strip(), "```", ""]
    p = peer or {}
    rows = [
        [
            "cold index, in process",
            _ms(cairn["reindex_s"]),
            "—",
            "—",
        ],
        [
            "cold index, whole command (`cairn reindex` / `bm reindex --search`)",
            _ms(cairn["reindex_cli_s"]),
            _ms(p["reindex_s"]) if p else "—",
            _ratio(p.get("reindex_s"), cairn["reindex_cli_s"]),
        ],
        [
            "notes indexed per second (whole command)",
            f"{n / cairn['reindex_cli_s']:.0f}",
            f"{n / p['reindex_s']:.1f}" if p else "—",
            _ratio(n / p["reindex_s"], n / cairn["reindex_cli_s"]) if p else "—",
        ],
    ]
    c_lat = cairn["lat"]
    b_lat = p.get("lat") or []
    rows.append(
        [
            f"search in process ({len(qs)} queries; `Memory.search` / `search_notes` tool, text)",
            _lat(c_lat),
            _lat(b_lat) if b_lat else "—",
            _ratio(percentile(b_lat, 50), percentile(c_lat, 50)) + " at p50" if b_lat else "—",
        ]
    )
    c_cli = statistics.median(cairn["cli"])
    b_cli = statistics.median(p["cli"]) if p.get("cli") else None
    rows.append(
        [
            f"CLI search, whole command (median of {len(cairn['cli'])})",
            _ms(c_cli),
            _ms(b_cli) if b_cli else "—",
            _ratio(b_cli, c_cli),
        ]
    )
    rows.append(
        [
            "index size / vault bytes",
            f"{cairn['index_bytes'] / 1e6:.2f} MB ({cairn['index_bytes'] / vault_bytes:.1f}x)",
            f"{p['index_bytes'] / 1e6:.2f} MB ({p['index_bytes'] / vault_bytes:.1f}x)" if p else "—",
            _ratio(p.get("index_bytes"), cairn["index_bytes"]),
        ]
    )
    rows.append(
        [
            "user files whose bytes changed by indexing",
            f"{cairn['changed']} of {n}",
            f"{len(p['changed'])} of {n}" if p else "—",
            "—",
        ]
    )
    overlaps: list[float] = []
    overlap_line = ""
    if p.get("top"):
        overlaps = [_overlap(a, b) for a, b in zip(cairn["top"], p["top"], strict=True)]
        valid = [o for o in overlaps if o == o]
        both_empty = len(overlaps) - len(valid)
        overlap_line = (
            f"- Top-{TOP} overlap between the two (notes in both top-{TOP}s / the longer list), reported "
            f"without judgement: mean {statistics.mean(valid):.2f} over {len(valid)} queries; "
            f"{sum(1 for o in valid if o == 1.0)} identical, {sum(1 for o in valid if o == 0)} disjoint, "
            f"{both_empty} empty on both."
            if valid
            else "- Top-5 overlap: no query returned results on either side."
        )
    table = md_table(["measure", "Cairn", "basic-memory", "ratio (bm / Cairn)"], rows)
    foot = [
        "",
        f"- Vault: {n} generated notes, {vault_bytes / 1e6:.2f} MB"
        + ("; basic-memory ran on a copy of it." if p else "."),
        f"- Queries: `vaultgen.queries({SEED}, {len(qs)})`, mixed Chinese/English; Cairn empty on "
        f"{sum(1 for t in cairn['top'] if not t)}"
        + (f", basic-memory empty on {sum(1 for t in p['top'] if not t)}." if p.get("top") else "."),
    ]
    if p:
        foot.append(
            f"- basic-memory {p.get('version', '?')} in its own venv (Python >= 3.12), keyword search "
            f"(`search_type=text`); its first in-process search took {_ms(p['first_s'])}, importing its "
            f"search tool {_ms(p['import_s'])}, `import basic_memory.cli.main` {_ms(p['cli_import_s'])}."
        )
        foot.append(
            f"- Its reindex said: `{p['reindex_out']}`. Vector search available on this interpreter: "
            f"{p['vector']} (it needs sqlite-vec and SQLite extension loading; when False it falls back "
            "to keyword search, which is what both sides were measured on)."
        )
        foot.append(
            f"- Files added to the vault by basic-memory: {len(p['added_files'])}"
            + (f" ({', '.join(p['added_files'][:5])})" if p["added_files"] else "")
            + f"; removed: {len(p['removed_files'])}; files differing after the CLI searches too: "
            f"{p['changed_end']}."
        )
        if p.get("example_diff"):
            k, b, a = p["example_diff"]
            foot.append(f"- Example rewrite `{k}`: last bytes before {b!r}, after {a!r}.")
        if p.get("errors"):
            foot.append(f"- {len(p['errors'])} searches returned an error string, e.g. {p['errors'][0]!r}.")
        if p.get("db_bytes") is not None:
            foot.append(
                f"- basic-memory's memory.db alone: {p['db_bytes'] / 1e6:.2f} MB "
                f"(the rest of its index figure is WAL/SHM)."
            )
        if overlaps:
            foot.append(overlap_line)
            for name, mine, theirs in (
                ("basic-memory", cairn["top"], p["top"]),
                ("Cairn", p["top"], cairn["top"]),
            ):
                only = [q for q, a, b in zip(qs, mine, theirs, strict=True) if a and not b]
                if only:
                    shown = ", ".join(f"`{q}`" for q in only[:10])
                    foot.append(f"- Empty on {name} only ({len(only)}): {shown}.")
            per = ", ".join("n/a" if o != o else f"{o:.1f}" for o in overlaps)
            foot.append(f"- Per-query top-{TOP} overlap (by note permalink, in query order): {per}.")
    if p or error:
        foot.append(
            "- Telemetry off for basic-memory: private HOME and BASIC_MEMORY_CONFIG_DIR, "
            "BASIC_MEMORY_NO_PROMOS=1, BASIC_MEMORY_AUTO_UPDATE=false, logfire disabled, "
            "BASIC_MEMORY_FORCE_LOCAL=true, HF_HUB_OFFLINE=1, DO_NOT_TRACK=1 (see `peer_env`)."
        )
    return "\n".join([*head, table, *foot]) + "\n"


def run(n: int = 300, n_queries: int = 50, workdir: Path | None = None) -> str:
    python, tried = find_python312()
    with tempfile.TemporaryDirectory(prefix="cairn-peers-", dir=workdir) as tmp:
        root = Path(tmp)
        vault, peer_vault = root / "vault", root / "bm-vault"
        notes: list[GenNote] = generate(vault, n, SEED)
        shutil.copytree(vault, peer_vault)
        vault_bytes = sum(len(b) for b in _files(vault).values())
        qs = queries(SEED, n_queries, notes)
        cli_qs = qs[:3]
        print(f"[peers] Cairn on {n} notes ...", file=sys.stderr, flush=True)
        cairn = measure_cairn(vault, root / "cairn-home", qs, cli_qs)
        peer, error, skipped = None, None, None
        if python is None:
            skipped = "no Python >= 3.12 found (basic-memory needs one); tried " + (
                ", ".join(tried) if tried else "python3.12/3.13/3.14 on PATH and pyenv versions"
            )
            print(f"[peers] basic-memory run skipped: {skipped}", file=sys.stderr, flush=True)
        else:
            try:
                py = ensure_peer_venv(python)
                peer = measure_peer(py, root, peer_vault, qs, cli_qs)
            except PeerError as exc:
                error = str(exc)
            except Exception as exc:  # the peer must never take the other benchmarks down
                error = f"{type(exc).__name__}: {exc}"
        return render(n, vault_bytes, qs, cairn, peer, error, skipped)


if __name__ == "__main__":
    size = int(sys.argv[sys.argv.index("--peer-notes") + 1]) if "--peer-notes" in sys.argv else 300
    text = run(size)
    print(text)
