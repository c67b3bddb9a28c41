"""The knowledge base's walk: every file under what the user named, and nothing outside it.

- A symbolic link is followed only when it points inside the folder being indexed: a folder once
  (a loop, or a second link to the same folder, is walked once), a file under its own path (so a
  file reached twice is indexed once). A link out of the folder, a loop, or a link to nothing is
  reported as skipped, never read.
- Only regular files are read (``kbindex`` checks the open descriptor): a FIFO, a socket or a
  device with a document's suffix is reported, never opened for a blocking read.
- A folder that cannot be listed is reported and the walk goes on.
- Hidden entries and the folders of ``SKIP_DIRS`` are passed over.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["SKIP_DIRS", "Found", "walk"]

SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})

#: (path, named explicitly, why it is skipped or ``None`` to read it); a path is a string: an
#: unchanged file costs a ``stat``, and making a ``Path`` of its name cost as much again
Found = tuple[str, bool, str | None]


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _link(path: str, root: str) -> tuple[str | None, str | None]:
    """(the link's real target if it may be followed, else why not)."""
    try:
        target = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError) as exc:  # a loop (ELOOP), a link to nothing
        why = "loops" if getattr(exc, "errno", None) == errno.ELOOP else "points to nothing"
        return None, f"a symbolic link that {why}; not followed"
    if not _inside(target, root):
        return None, "a symbolic link out of the indexed folder; not followed"
    return target, None


def _folder(folder: str, root: str, suffixes: frozenset[str]) -> tuple[list[Found], list[str]]:
    """The files of one folder (in name order) and its sub-folders to walk."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        return [(folder, False, f"the folder cannot be listed: {exc.strerror or exc}")], []
    files: list[Found] = []
    subdirs: list[str] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = entry.path
        try:
            if entry.is_symlink():
                target, why = _link(path, root)
                if target is None:
                    if os.path.isdir(path) or _suffix(path) in suffixes:
                        files.append((path, False, why))
                elif os.path.isdir(target):
                    subdirs.append(target)
                elif _suffix(target) in suffixes:
                    files.append((target, False, None))
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS:
                    subdirs.append(path)
            elif _suffix(entry.name) in suffixes:
                files.append((path, False, None))
        except OSError as exc:
            files.append((path, False, f"cannot be looked at: {exc.strerror or exc}"))
    return files, subdirs


def _suffix(name: str) -> str:
    """What ``Path(name).suffix.lower()`` is, without making a path."""
    return os.path.splitext(name)[1].lower()


def walk(roots: Iterable[Path], suffixes: frozenset[str]) -> Iterator[Found]:
    """Every file under ``roots`` (resolved paths) with a suffix in ``suffixes``, each once; a
    root that is not a folder is yielded as named explicitly."""
    given: set[str] = set()
    for root in roots:
        if not root.is_dir():
            if str(root) not in given:
                given.add(str(root))
                yield str(root), True, None
            continue
        folders: set[tuple[int, int]] = set()
        stack = [str(root)]
        while stack:
            folder = stack.pop()
            try:
                st = os.stat(folder)
            except OSError as exc:
                yield folder, False, f"the folder cannot be looked at: {exc.strerror or exc}"
                continue
            if (st.st_dev, st.st_ino) in folders:
                continue  # reached again through a link: walked once
            folders.add((st.st_dev, st.st_ino))
            files, subdirs = _folder(folder, str(root), suffixes)
            for found in files:
                if found[0] not in given:
                    given.add(found[0])
                    yield found
            stack.extend(reversed(subdirs))
