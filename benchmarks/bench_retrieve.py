"""Finding the file to change: one cycle vs the loop (seed 004) vs plain BM25 (bm25s), file Acc@k.

**Real bug reports** (``benchmarks/data/bug_reports.jsonl``): each task is an issue's text as its
reporter wrote it, paired with the commit that fixed it; the gold set is the non-test source files
that commit changed. Each task's tree is its fix's parent, taken with ``git archive`` from a clone
of the project (``SW_BENCH_REPOS``, default ``/work/.mirror``, laid out ``owner+name/repo``; the
``fetch`` tool's copies) into a cache outside the project (``SW_BENCH_CACHE``, default
``~/.cache/sourcewise-bench/retrieve``); the projects' code is never committed. A task counts at k
when any gold file is among the first k files. BM25 ranks the same trees' non-test Python source
files (bm25s over the analyzer's terms of path and text), in the same run. Two projects
(``HELD_OUT``) were never tuned on and are reported apart.

Each row also gives the median tree's number of such files and the share of its tasks a random top 5
would hit: 80 of the reports come from small trees (median 17 source files), where a top 5 is about a
third of the tree and BM25 finds the file for 79 of 80 (black's two, at 49 files, among them; the
run of 2026-11-28 12:07 UTC). The rest come from larger trees, taken
by stated rules. pytest (76 files) and pylint (175): newest first, every first-parent fix commit of
2022-2024 whose message closes exactly one issue (GitHub's closing keywords; a squash merge's own
``(#PR)`` aside) and whose diff touches 1-3 non-test ``.py`` files, kept when the search tool's copy of
the issue holds its reporter's description: pytest's first 13 such commits gave 9, pylint's first 6
gave 4. sphinx (171 files): its fixes are branch commits titled ``Fix #N: ...`` / ``Close #N: ...``
(2018 on, newest first, the oldest commit per issue), same file rule: the first 27 gave 17 (the others'
issue was not found, or only a pull request or a comment was). xarray (141 files): first-parent
commits of 2021 on, same rules: the first 4 gave 3. black (49 files): first-parent commits of
2022-2024, same rules: the first 8 gave 2 (one of the 6 others, #4288, was not looked up). Large trees:
sympy (tuning) and astropy (held out, never tuned on), about 900 and 500 non-test source files: newest first,
every commit since 2022 (not a merge) whose message says it fixes or closes exactly one issue (sympy's PR
template's "Fixes #1234" placeholder not counted) and whose diff touches 1-3 non-test ``.py`` files, kept when the search tool's copy of the issue holds its reporter's
description (cut where that copy ends): sympy's first 13 gave 7, astropy's first 8 gave 7. Rows by
size band (a tree's non-test source files: under 50, 50-499, 500+) gather the tasks across projects.

**Worked examples**: seed 004's two examples as generated repositories (``tests/retrieve_repo.py``):
where the files the seed names land, for one cycle and for the loop.

**Speed**: per task on a warm index of a 1,000-file repository (fastapi's newest tree, cut to its
first 1,000 files: package, tests, code samples), p50 and p95 over the tasks' texts.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sourcewise import Session, retrieve
from sourcewise.config import Settings, load_settings
from sourcewise.sources.code.locate import kind_of
from sourcewise.text.analyze import analyze

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "bug_reports.jsonl"
REPOS = Path(os.environ.get("SW_BENCH_REPOS", "/work/.mirror"))
CACHE = Path(os.environ.get("SW_BENCH_CACHE", Path.home() / ".cache" / "sourcewise-bench" / "retrieve"))
KS = (1, 5, 10)
METHODS = ("BM25 (bm25s)", "one cycle", "loop (3 cycles)")


def tasks() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text("utf-8").splitlines() if line.strip()]


def tree(repo: str, commit: str) -> Path | None:
    """The project's tree at ``commit`` in the cache (made once), or ``None`` without a clone."""
    clone = REPOS / repo.replace("/", "+") / "repo"
    target = CACHE / f"{repo.replace('/', '+')}-{commit[:10]}"
    if target.is_dir():
        return target
    if not clone.exists():
        return None
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(clone), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def sources(root: Path) -> list[str]:
    """The tree's non-test Python source files: what BM25 ranks (the issue's "non-test .py files")."""
    return sorted(
        rel for p in root.rglob("*.py") if kind_of(rel := p.relative_to(root).as_posix()) == "source"
    )


def bm25(root: Path, task: str) -> list[str]:
    import bm25s  # type: ignore[import-untyped]  # the bench extra

    files = sources(root)
    corpus = [analyze(f + " " + (root / f).read_text("utf-8", errors="replace")) for f in files]
    model = bm25s.BM25()
    model.index(corpus, show_progress=False)
    docs, _ = model.retrieve([analyze(task) or ["x"]], k=min(10, len(files)), show_progress=False)
    return [files[int(i)] for i in docs[0]]


def ranked(root: Path, task: str, cycles: int, st: Settings) -> tuple[list[str], int]:
    found = retrieve(task, sources=[f"code:{root}"], max_cycles=cycles, limit=10, settings=st)
    return list(dict.fromkeys(c.hit.path for c in found.considered if c.hit.path)), len(found.cycles)


def first_hit(files: list[str], gold: set[str]) -> int | None:
    return next((i + 1 for i, p in enumerate(files) if p in gold), None)


def _acc(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


# size bands by a tree's source files: under 50 a top 5 is about a third of the tree; 500+ is a large project
BANDS = ((0, 50, "trees under 50 source files"), (50, 500, "trees of 50-499"), (500, 10**9, "trees of 500+"))
HELD_OUT = frozenset(
    {"marshmallow-code/marshmallow", "pylint-dev/pylint", "astropy/astropy"}
)  # never tuned on; reported apart


def _row(label: str, got: dict[str, list[int | None]], files: list[int]) -> str:
    """One project's (or group's) row: tasks, the median tree's source files and the share of tasks a
    random top 5 of them would hit (why BM25 is strong on small trees), then each method's Acc@k."""
    cells = [f"{_acc(got[m], k):.3f}" for m in METHODS for k in KS]
    chance = statistics.mean(min(1.0, 5 / n) for n in files) if files else 0.0
    head = f"| {label} | {len(got[METHODS[0]])} | {statistics.median(files):g} | {chance:.2f} | "
    return head + " | ".join(cells) + " |"


def _summary(label: str, got: dict[str, list[int | None]]) -> str:
    a5 = {m: _acc(got[m], 5) for m in METHODS}
    pairs = list(zip(got[METHODS[2]], got[METHODS[1]], strict=True))
    wins = sum(1 for a, b in pairs if _hit5(a) and not _hit5(b))
    losses = sum(1 for a, b in pairs if _hit5(b) and not _hit5(a))
    ratio = (lambda m: f"{a5[m] / a5[METHODS[0]]:.3f}x") if a5[METHODS[0]] else (lambda m: "n/a")
    return (
        f"{label}: Acc@5 loop / BM25 {ratio(METHODS[2])}, one cycle / BM25 {ratio(METHODS[1])}; the loop "
        f"finds the file in the top 5 for {wins} task(s) one cycle misses and misses it for {losses}"
    )


def real(st: Settings) -> tuple[str, dict[str, list[float]]]:
    by_project: dict[str, dict[str, list[int | None]]] = defaultdict(lambda: defaultdict(list))
    sizes: dict[str, list[int]] = defaultdict(list)  # each task's tree: its source files
    skipped: set[str] = set()
    cycles_run: list[int] = []
    band_got: dict[str, dict[str, list[int | None]]] = {b: defaultdict(list) for _, _, b in BANDS}
    band_files: dict[str, list[int]] = defaultdict(list)
    for t in tasks():
        repo, text, gold = str(t["repo"]), str(t["text"]), set(t["gold"])
        root = tree(repo, str(t["parent"]))
        if root is None:
            skipped.add(repo)
            continue
        size = len(sources(root))
        sizes[repo].append(size)
        loop, n = ranked(root, text, 3, st)
        cycles_run.append(n)
        runs = {"BM25 (bm25s)": bm25(root, text), "one cycle": ranked(root, text, 1, st)[0], METHODS[2]: loop}
        band = next(b for lo, hi, b in BANDS if lo <= size < hi)
        band_files[band].append(size)
        for name, files in runs.items():
            by_project[repo][name].append(first_hit(files, gold))
            band_got[band][name].append(first_hit(files, gold))
    assert by_project, f"no task's project is cloned under {REPOS}"
    head = "| project | tasks | source files | random @5 | "
    rows = [head + " | ".join(f"{m} @{k}" for m in METHODS for k in KS) + " |"]
    rows.append("|---|---|---|---|" + "---|" * (len(METHODS) * len(KS)))
    group_files: dict[str, list[int]] = defaultdict(list)
    groups: dict[str, dict[str, list[int | None]]] = {
        g: defaultdict(list) for g in ("tuning", "held-out", "all")
    }
    worse = []
    for repo in sorted(by_project):
        got = by_project[repo]
        held = repo in HELD_OUT
        rows.append(_row(repo + (" (held out)" if held else ""), got, sizes[repo]))
        group_files["held-out" if held else "tuning"] += sizes[repo]
        group_files["all"] += sizes[repo]
        for m in METHODS:
            groups["held-out" if held else "tuning"][m] += got[m]
            groups["all"][m] += got[m]
        if _acc(got[METHODS[2]], 5) < _acc(got[METHODS[1]], 5):
            worse.append(repo)
    for _, _, band in BANDS:
        groups[band], group_files[band] = band_got[band], band_files[band]
    names = ("tuning", "held-out", *(b for _, _, b in BANDS), "all")
    for g in names:
        if groups[g][METHODS[0]]:
            rows.append(_row(f"**{g}**", groups[g], group_files[g]))
    notes = [""] + [_summary(g, groups[g]) for g in names if groups[g][METHODS[0]]]
    notes.append(
        f"cycles run: median {statistics.median(cycles_run)}, mean {statistics.mean(cycles_run):.2f}; "
        f"projects where the loop is worse than one cycle at 5: {', '.join(worse) or 'none'}"
    )
    if skipped:
        notes.append(f"not cloned, skipped: {', '.join(sorted(skipped))}")
    every = groups["all"]
    return "\n".join(rows + notes), {m: [float(r or 0) for r in every[m]] for m in METHODS}


def _hit5(rank: int | None) -> bool:
    return rank is not None and rank <= 5


def examples(st: Settings, base: Path) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from retrieve_repo import AUTH_REPO, AUTH_TASK, REPO, TASK, write_repo

    rows = [
        "| example | files the seed names | one cycle: ranks | loop: ranks | loop: cycles |",
        "|---|---|---|---|---|",
    ]
    named = {
        AUTH_TASK: (
            "src/auth/auth.ts",
            "src/auth/tokens.ts",
            "src/auth/session-manager.ts",
            "src/auth/jwt-utils.ts",
        ),
        TASK: ("src/app/middleware/throttle.py", "src/app/middleware/__init__.py", "src/app/routes.py"),
    }
    for i, (task, files) in enumerate(((AUTH_TASK, AUTH_REPO), (TASK, REPO))):
        root = write_repo(base / f"example{i}", files)
        one, _ = ranked(root, task, 1, st)
        loop, n = ranked(root, task, 3, st)
        want = named[task]
        cells = [", ".join(str(got.index(w) + 1) if w in got else "-" for w in want) for got in (one, loop)]
        names = ", ".join(Path(w).name for w in want)
        rows.append(f"| {task} | {names} | {cells[0]} | {cells[1]} | {n} |")
    return "\n".join(rows)


def thousand() -> Path | None:
    """A 1,000-file repository: fastapi's newest tree, its package, tests and code samples first
    (its many translated doc pages last), copied into the cache."""
    clone = REPOS / "fastapi+fastapi" / "repo"
    if not clone.exists():
        return None
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True)
    full = tree("fastapi/fastapi", head.stdout.strip())
    target = CACHE / "fastapi-1000"
    if full is None or target.is_dir():
        return target if target.is_dir() else None
    order = ("fastapi/", "tests/", "docs_src/", "")
    files = sorted(
        (p.relative_to(full).as_posix() for p in full.rglob("*") if p.is_file()),
        key=lambda rel: (next(i for i, o in enumerate(order) if rel.startswith(o)), rel),
    )[:1000]
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(full / rel, target / rel)
    return target


def speed(st: Settings) -> str:
    """p50/p95 per task on the warm 1,000-file index: the module function (a session opened and
    closed per call, as a one-shot command does) and one session kept open (a door's, an agent's)."""
    root = thousand()
    if root is None:
        return "speed: fastapi is not cloned"
    start = time.perf_counter()
    retrieve("warm the index", sources=[f"code:{root}"], max_cycles=1, settings=st)
    first = time.perf_counter() - start
    out = [
        f"speed on a 1,000-file repository (fastapi's package, tests and samples): first index {first:.1f} s"
    ]
    session = Session(st)
    try:
        for cycles, kept in ((1, None), (3, None), (1, session), (3, session)):
            times = []
            for t in tasks():
                start = time.perf_counter()
                retrieve(
                    str(t["text"]), sources=[f"code:{root}"], max_cycles=cycles, settings=st, session=kept
                )
                times.append(time.perf_counter() - start)
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            name = ("one cycle" if cycles == 1 else "the loop") + (", one session" if kept else "")
            out.append(
                f"{name}: p50 {statistics.median(times):.3f} s, p95 {p95:.3f} s ({len(times)} task texts)"
            )
    finally:
        asyncio.run(session.aclose())
    return "; ".join(out)


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        st = load_settings(state_dir=CACHE / "state")
        table, _ = real(st)
        ex = examples(load_settings(state_dir=Path(tmp) / "state"), Path(tmp))
        fast = speed(st)
    return f"**Real bug reports**\n\n{table}\n\n**Seed 004's worked examples**\n\n{ex}\n\n{fast}"
