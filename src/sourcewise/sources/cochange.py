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
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
MAX_OUTPUT = 20_000_000  # bytes of git output read at most; git is stopped past them
MAX_ERROR = 65_536  # bytes of git's messages kept
_CHUNK = 65_536
_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
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
    """The commits of ``git log --format=%x00%H --name-only -z`` output, and how many were left out
    for touching more than ``max_files`` files. Commits with no file (empty, or outside the folder)
    are dropped.

    git writes each commit as ``NUL hash NUL``, then, if it touched files, a newline and each path
    followed by a NUL. A path may hold any character but NUL (newlines, ``\x1e``, even 40 hex
    digits), and is never empty; so an empty field, which only two NULs in a row make, starts a
    record, and the field after it is the commit's hash (anything else there is not a record)."""
    commits: list[frozenset[str]] = []
    skipped = 0
    files: list[str] | None = None  # the current record's paths; None outside a record

    def close() -> None:
        nonlocal skipped
        if files is None:
            return
        if len(set(files)) > max_files:
            skipped += 1
        elif files:
            commits.append(frozenset(files))

    fields = out.split("\0")
    i = 0
    while i < len(fields):
        field = fields[i]
        if not field:  # a record starts here (or the output ends)
            close()
            files = [] if i + 1 < len(fields) and _HASH.fullmatch(fields[i + 1]) else None
            i += 2 if files is not None else 1
            continue
        if files is not None:
            path = field.removeprefix("\n") if not files else field  # the newline before the first path
            if path:
                files.append(path)
        i += 1
    close()
    return tuple(commits), skipped


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill git and anything it started (its own process group); nothing once it is reaped."""
    if proc.returncode is not None:
        return
    try:
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass


def _drain(stream: IO[bytes] | None, into: bytearray) -> None:
    """Read ``stream`` to its end, keeping its first ``MAX_ERROR`` bytes."""
    if stream is None:
        return
    try:
        while chunk := stream.read(_CHUNK):
            into += chunk[: max(0, MAX_ERROR - len(into))]
    except (OSError, ValueError):  # closed under us: what was read is enough
        pass


def _run_git(
    args: list[str], env: dict[str, str], timeout: float, limit: int
) -> tuple[int, bytes, bytes, bool]:
    """Run git: its exit code, its output (at most ``limit`` bytes: past that git is killed and the
    last value is true), the start of its messages. ``TimeoutExpired`` when it runs over ``timeout``;
    it is killed then. The output is read as it comes, never more than ``limit`` held."""
    started = time.monotonic()
    proc = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=0,
        start_new_session=sys.platform != "win32",
    )  # fmt: skip
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    err = bytearray()
    reader = threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True)
    out = bytearray()
    cut = False
    try:
        timer.start()
        reader.start()
        assert proc.stdout is not None
        while chunk := proc.stdout.read(_CHUNK):
            out += chunk
            if len(out) > limit:
                cut = True
                del out[limit:]
                _kill(proc)
                break
        timer.cancel()
        timer.join()  # from here on the timer kills nothing: git is still unreaped until then
        try:
            code = proc.wait(timeout=max(0.0, timeout - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            expire()
            code = proc.wait()
    except BaseException:
        timer.cancel()
        timer.join()
        _kill(proc)
        proc.wait()
        raise
    finally:
        reader.join(timeout=1.0)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if expired.is_set():
        raise subprocess.TimeoutExpired(args, timeout)
    return code, bytes(out), bytes(err), cut


def _git_env() -> dict[str, str]:
    """The environment git runs in: the caller's without any ``GIT_*`` variable (``GIT_DIR``,
    ``GIT_WORK_TREE``, ``GIT_CONFIG_*``, ``GIT_SSH_COMMAND`` ... would point git at another repository
    or run something), plus the few set on purpose, and git's messages in English (read below)."""
    env = {key: value for key, value in os.environ.items() if not key.upper().startswith("GIT_")}
    env.update(_GIT_ENV)
    env.update(LC_ALL="C", LANGUAGE="C")
    return env


def read_history(
    root: Path,
    *,
    max_commits: int = MAX_COMMITS,
    max_files: int = MAX_FILES,
    timeout: float = GIT_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> History:
    """The recent history of the git repository ``root`` lies in (paths relative to ``root``); at most
    ``max_output`` bytes of git's output are read (the commits wholly within them)."""
    args = [
        "git", "--no-pager", "-C", str(root), *(a for kv in _CONFIG for a in ("-c", "=".join(kv))),
        "log", f"-n{max_commits}", "--no-merges", "--no-ext-diff", "--no-textconv", "--no-show-signature",
        "--no-mailmap", "--no-renames", f"-O{os.devnull}", "--relative", "--name-only", "-z",
        "--format=%x00%H", "HEAD", "--",
    ]  # fmt: skip
    try:
        code, out, err, cut = _run_git(args, _git_env(), timeout, max_output)
    except FileNotFoundError:
        return History(note="co-change unavailable: git is not installed")
    except subprocess.TimeoutExpired:
        return History(note=f"co-change unavailable: git log took over {timeout:g}s")
    except OSError as exc:
        return History(note=f"co-change unavailable: git could not run ({exc.strerror or exc})")
    if code != 0 and not cut:
        low = err.decode("utf-8", "replace").lower()
        if "not a git repository" in low:
            why = "not a git repository"
        elif "dubious ownership" in low:
            why = "git does not trust the folder's owner (see git's safe.directory)"
        elif "promisor remote" in low:
            why = "the history is incomplete (a partial clone; its missing objects are not fetched)"
        elif "does not have any commits" in low or "unknown revision" in low or "bad revision" in low:
            why = "the repository has no commits yet"
        else:
            why = f"git log failed (exit {code})"
        return History(note=f"co-change unavailable: {why}")
    if cut:  # the last record read may be partial: keep up to the last record's start (two NULs)
        out = out[: out.rfind(b"\0\0") + 1]
    commits, skipped = parse_log(out.decode("utf-8", "replace"), max_files)
    note = f"co-change: {len(commits)} commits read"
    note += f", {skipped} touching more than {max_files} files left out" if skipped else ""
    note += f" (git's output cut at {max_output:,} bytes)" if cut else ""
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
