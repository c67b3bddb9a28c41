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

The folder may be anyone's, and so may its ``.git/config``; the caller's environment may point git
elsewhere (a git hook sets ``GIT_DIR``). So git runs without the caller's ``GIT_*`` variables, and
with the repository's keys that could run a program, reach the network or read an endless file
overridden on its command line (which outranks every config file): no signature checks
(``gpg.program``), no transport at all (a partial clone's missing objects are not fetched: its
history is reported incomplete), no hooks, no fsmonitor, no mailmap, no diff order file, no rename
detection (it would read blobs), no implicitly found bare repository. The user's own global and
system configuration is kept otherwise (``safe.directory`` among it).
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
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for a password
    "GIT_OPTIONAL_LOCKS": "0",  # a read takes no lock the user's own git could trip on
    "GIT_PAGER": "cat",
    "GIT_NO_LAZY_FETCH": "1",  # git 2.45+: a partial clone fetches nothing (before: protocol.allow below)
}
_CONFIG = (
    ("core.quotePath", "false"),
    ("core.fsmonitor", "false"),  # a hook program named by the repository
    ("core.hooksPath", os.devnull),
    ("protocol.allow", "never"),  # no transport, so no lazy fetch of a partial clone (core.sshCommand ...)
    ("log.showSignature", "false"),  # it runs gpg.program / gpg.ssh.program
    ("log.mailmap", "false"),  # mailmap.file may name a FIFO or /dev/zero
    ("safe.bareRepository", "explicit"),  # a bare repository planted in the folder is not used
)


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


def _git_env() -> dict[str, str]:
    """The environment git runs in: the caller's without any ``GIT_*`` variable (``GIT_DIR``,
    ``GIT_WORK_TREE``, ``GIT_CONFIG_*``, ``GIT_SSH_COMMAND`` ... would point git at another repository
    or run something), plus the few set on purpose, and git's messages in English (read below)."""
    env = {key: value for key, value in os.environ.items() if not key.upper().startswith("GIT_")}
    env.update(_GIT_ENV)
    env.update(LC_ALL="C", LANGUAGE="C")
    return env


def read_history(
    root: Path, *, max_commits: int = MAX_COMMITS, max_files: int = MAX_FILES, timeout: float = GIT_TIMEOUT
) -> History:
    """The recent history of the git repository ``root`` lies in (paths relative to ``root``)."""
    args = [
        "git", "--no-pager", "-C", str(root), *(a for kv in _CONFIG for a in ("-c", "=".join(kv))),
        "log", f"-n{max_commits}", "--no-merges", "--no-ext-diff", "--no-textconv", "--no-show-signature",
        "--no-mailmap", "--no-renames", f"-O{os.devnull}", "--relative", "--name-only", "-z",
        f"--format=%x{ord(_SEP):02x}", "HEAD", "--",
    ]  # fmt: skip
    env = _git_env()
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
        elif "promisor remote" in err:
            why = "the history is incomplete (a partial clone; its missing objects are not fetched)"
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
