"""The code source's file walk: what a refresh of the index reads, in path order.

It honours every ``.gitignore`` on the way down (and ``.git/info/exclude``) with ``pathspec`` on its
RE2 backend: a repository's ignore patterns are text from outside, and Python's ``re`` takes seconds
on a pattern like ``*a*a*a*b`` against a long name; RE2 is linear. Ignored directories are pruned,
never entered; symlinks are not followed (they can point out of the repository). A warm walk reads
no file: it lists folders and stats files (``codeindex.py`` re-reads those whose mtime or size
changed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

__all__ = ["Candidate", "Globs", "Walk", "compile_globs", "read_source", "walk"]

BINARY_SNIFF = 8192
MAX_IGNORE_BYTES = 1_000_000  # a larger .gitignore is not a real one; it is skipped and reported
LONG_LINE = 1000  # average characters per line above which a file is minified or generated

Globs = pathspec.PathSpec[pathspec.Pattern]


def compile_globs(lines: list[str] | tuple[str, ...]) -> Globs:
    """Git-style globs (``src/**``, ``*.test.*``) matched in linear time."""
    return pathspec.PathSpec.from_lines("gitignore", lines, backend="re2")


@dataclass(frozen=True)
class Candidate:
    rel: str
    where: str  # the file's path as the walk met it (a ``Path`` only when read: a warm walk reads none)
    mtime_ns: int
    size: int

    @property
    def path(self) -> Path:
        return Path(self.where)


@dataclass
class Walk:
    files: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0


def _ignore_spec(directory: Path, name: str, walk_: Walk, rel: str) -> pathspec.GitIgnoreSpec | None:
    path = directory / name
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_IGNORE_BYTES:
            walk_.skipped.append((rel, "ignore file larger than 1 MB; not applied"))
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        walk_.skipped.append((rel, f"ignore file not read: {exc.strerror or exc}"))
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except ValueError:  # git skips a pattern it cannot read and applies the rest; so do we
        good = [line for line in lines if _valid(line)]
        walk_.skipped.append((rel, f"{len(lines) - len(good)} pattern(s) not understood; the rest applied"))
        return pathspec.GitIgnoreSpec.from_lines(good, backend="re2")


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="re2")
    except ValueError:
        return False
    return True


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str) -> bool:
    """Git's rule: the deepest ignore file with a matching pattern decides; its last match wins."""
    for prefix, spec in reversed(specs):
        result = spec.check_file(rel[len(prefix) :])
        if result.include is not None:
            return bool(result.include)
    return False


def walk(
    root: Path,
    *,
    include: Globs | None,
    exclude: Globs | None,
    gitignore: bool,
    max_bytes: int,
    max_files: int,
) -> Walk:
    """The files under ``root`` to index, in path order, and the ones skipped with why."""
    out = Walk()
    stack: list[tuple[str, str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [(str(root), "", [])]
    if gitignore and (spec := _ignore_spec(root / ".git" / "info", "exclude", out, ".git/info/exclude")):
        stack[0][2].append(("", spec))
    while stack:
        directory, prefix, specs = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            out.skipped.append((prefix or ".", f"unreadable directory: {exc.strerror or exc}"))
            continue
        has_ignore = gitignore and any(e.name == ".gitignore" for e in entries)  # no stat per folder
        if has_ignore and (spec := _ignore_spec(Path(directory), ".gitignore", out, f"{prefix}.gitignore")):
            specs = [*specs, (prefix, spec)]
        for entry in entries:
            rel = prefix + entry.name
            if entry.name == ".git":
                continue
            if entry.is_symlink():
                out.skipped.append((rel, "symlink, not followed"))
            elif entry.is_dir(follow_symlinks=False):
                if _ignored(specs, rel + "/") or (exclude is not None and exclude.match_file(rel + "/")):
                    out.ignored += 1
                else:
                    stack.append((entry.path, rel + "/", specs))
            elif entry.is_file(follow_symlinks=False):
                _consider(out, entry, rel, specs, include, exclude, max_bytes, max_files)
    out.files.sort(key=lambda c: c.rel)
    return out


def _consider(
    out: Walk,
    entry: os.DirEntry[str],
    rel: str,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    include: Globs | None,
    exclude: Globs | None,
    max_bytes: int,
    max_files: int,
) -> None:
    if (
        _ignored(specs, rel)
        or (include is not None and not include.match_file(rel))
        or (exclude is not None and exclude.match_file(rel))
    ):
        out.ignored += 1
        return
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        out.skipped.append((rel, f"unreadable: {exc.strerror or exc}"))
        return
    if st.st_size > max_bytes:
        out.skipped.append((rel, f"too large: {st.st_size:,} bytes (limit {max_bytes:,})"))
    elif len(out.files) >= max_files:
        out.skipped.append((rel, f"file limit reached ({max_files:,} files)"))
    else:
        out.files.append(Candidate(rel, entry.path, st.st_mtime_ns, st.st_size))


def read_source(path: Path) -> tuple[str | None, str]:
    """The file's text, or ``None`` and why it is skipped (binary, minified, unreadable)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if b"\x00" in data[:BINARY_SNIFF]:
        return None, "binary"
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.count("\n") + 1
    if len(text) > 20 * LONG_LINE and len(text) / lines > LONG_LINE:
        return None, "minified or generated (lines average over 1,000 characters)"
    return text, ""
