"""Change coupling: files that changed together in a repository's past commits.

When a code source's folder is a git repository, the refine step reads its history up to HEAD (what
the user's checkout has; never anything after it) with ``git log --name-only``: at most
``MAX_COMMITS`` recent non-merge commits, paths relative to the source's folder, commits that touch
more than ``MAX_FILES`` files left out (bulk renames, formatting). ``neighbours`` turns the history
into association rules: for a seed file, every file that changed with it in at least
``MIN_SUPPORT`` commits, with the confidence ``together / commits of the seed``.

Reading the history never fails the caller: no git, not a repository, no commits yet or a slow git
give an empty ``History`` whose ``note`` says why. git runs with a timeout, no pager, no prompt, no
external diff or text conversion, and no network (``log`` reads only the local object store).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GIT_TIMEOUT",
    "MAX_COMMITS",
    "MAX_FILES",
    "MIN_CONFIDENCE",
    "MIN_SUPPORT",
    "History",
    "Neighbour",
    "neighbours",
    "parse_log",
    "read_history",
]

MAX_COMMITS = 500
MAX_FILES = 15
MIN_SUPPORT = 2
MIN_CONFIDENCE = 0.5
GIT_TIMEOUT = 10.0
MAX_OUTPUT = 20_000_000  # characters of git output read at most
_SEP = "\x1e"


@dataclass(frozen=True)
class History:
    """The files of each commit read (newest first), and a note on what was read or why nothing was."""

    commits: tuple[frozenset[str], ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Neighbour:
    """``path`` changed together with ``seed`` in ``together`` of the seed's ``seed_commits`` commits."""

    path: str
    seed: str
    together: int
    seed_commits: int

    @property
    def confidence(self) -> float:
        return self.together / self.seed_commits if self.seed_commits else 0.0

    @property
    def reason(self) -> str:
        return f"changed together with {self.seed} in {self.together} of its {self.seed_commits} commits"


def parse_log(out: str, max_files: int = MAX_FILES) -> tuple[tuple[frozenset[str], ...], int]:
    """The commits of ``git log --format=%x1e --name-only -z`` output, and how many were left out
    for touching more than ``max_files`` files. Commits with no file (empty, or outside the folder)
    are dropped."""
    commits: list[frozenset[str]] = []
    skipped = 0
    for block in out.split(_SEP)[1:]:
        parts = block.split("\0")
        if len(parts) > 1 and parts[1].startswith("\n"):
            parts[1] = parts[1][1:]
        files = frozenset(p for p in parts if p)
        if len(files) > max_files:
            skipped += 1
        elif files:
            commits.append(files)
    return tuple(commits), skipped


def read_history(
    root: Path, *, max_commits: int = MAX_COMMITS, max_files: int = MAX_FILES, timeout: float = GIT_TIMEOUT
) -> History:
    """The recent history of the git repository ``root`` lies in (paths relative to ``root``)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat"}
    env.update(LC_ALL="C", LANGUAGE="C")  # git's messages in English: they are read below
    args = [
        "git", "-C", str(root), "-c", "core.quotePath=false", "-c", "core.fsmonitor=false", "log",
        f"-n{max_commits}", "--no-merges", "--no-ext-diff", "--no-textconv", "--relative", "--name-only",
        "-z", f"--format=%x{ord(_SEP):02x}", "HEAD", "--",
    ]  # fmt: skip
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return History(note="co-change unavailable: git is not installed")
    except subprocess.TimeoutExpired:
        return History(note=f"co-change unavailable: git log took over {timeout:g}s")
    except OSError as exc:
        return History(note=f"co-change unavailable: git could not run ({exc.strerror or exc})")
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").lower()
        if "not a git repository" in err:
            why = "not a git repository"
        elif "dubious ownership" in err:
            why = "git does not trust the folder's owner (see git's safe.directory)"
        elif "does not have any commits" in err or "unknown revision" in err or "bad revision" in err:
            why = "the repository has no commits yet"
        else:
            why = f"git log failed (exit {done.returncode})"
        return History(note=f"co-change unavailable: {why}")
    commits, skipped = parse_log(done.stdout[:MAX_OUTPUT].decode("utf-8", "replace"), max_files)
    note = f"co-change: {len(commits)} commits read"
    note += f", {skipped} touching more than {max_files} files left out" if skipped else ""
    return History(commits=commits, note=note)


def neighbours(
    history: History,
    seeds: Sequence[str],
    *,
    min_support: int = MIN_SUPPORT,
    min_confidence: float = MIN_CONFIDENCE,
    limit: int = 5,
) -> list[Neighbour]:
    """Files (not themselves seeds) that changed with a seed in at least ``min_support`` commits and
    at least ``min_confidence`` of that seed's commits; each with its best seed (highest confidence,
    then support, then the earlier seed); the most confident first, ties by path."""
    chosen = list(dict.fromkeys(seeds))
    wanted = set(chosen)
    count: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for files in history.commits:
        mine = files & wanted
        if not mine:
            continue
        for seed in mine:
            count[seed] += 1
            for other in files - wanted:
                pairs[seed, other] += 1
    best: dict[str, Neighbour] = {}
    for (seed, other), together in pairs.items():
        n = Neighbour(other, seed, together, count[seed])
        if together < min_support or n.confidence < min_confidence:
            continue
        old = best.get(other)
        if old is None or (n.confidence, n.together, -chosen.index(seed)) > (
            old.confidence, old.together, -chosen.index(old.seed)
        ):  # fmt: skip
            best[other] = n
    ranked = sorted(best.values(), key=lambda n: (-n.confidence, -n.together, n.path))
    return ranked[:limit]
