"""Who may read a document, as its source says, for the per-document filter of the network doors.

A document's readers are principals: ``*`` (public: anyone the source is open to), ``user:NAME`` and
``group:NAME``, case-folded. A source stores them beside the document in its index and keeps, inside
its query, only the documents whose readers meet the current user's principals (``access.readers``,
which always holds ``*``). A document the user may not see is thus never scored into a result, a
count or a report: it is not there for that query.

For files, the readers are what the file system says (``FileReaders``): a file that everyone may
read, in folders that everyone may list and enter all the way from ``/``, is public; otherwise only
its owner and, where the group bits allow it, its group may read it. Every folder above counts, not
only those under the folder being indexed: a file is as private as the most private folder it is
in, however it was named to ``index`` (a folder, the file itself, a rebuild from a file list).
Where the folders and the file name different owners or groups the readers are those every step
allows (possibly none: then no key of the doors sees it, as no user of the machine could read it
either).
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections.abc import Iterable
from pathlib import Path

from sourcewise.access import PUBLIC

__all__ = ["FileReaders", "decode", "encode"]
_SEP = "\n"  # between principals where a store keeps them as one text (names hold no control character)

_FILE = (stat.S_IROTH, stat.S_IRGRP, stat.S_IRUSR)
_FOLDER = (stat.S_IROTH | stat.S_IXOTH, stat.S_IRGRP | stat.S_IXGRP, stat.S_IRUSR | stat.S_IXUSR)


def encode(readers: Iterable[str]) -> str:
    return _SEP.join(readers)


def decode(text: str) -> tuple[str, ...]:
    return tuple(text.split(_SEP)) if text else ()


def _name(lookup: object, number: int) -> str:
    try:
        return str(lookup(number)[0]).casefold()  # type: ignore[operator]
    except (KeyError, OverflowError):
        return f"#{number}"  # an id the machine has no name for


class FileReaders:
    """The readers of files, their folders' permissions read once per run."""

    def __init__(self) -> None:
        self._folders: dict[str, frozenset[str] | None] = {}
        self._chains: dict[str, frozenset[str] | None] = {}  # a folder and all above it

    def _allowed(self, st: os.stat_result, bits: tuple[int, int, int]) -> frozenset[str] | None:
        """``None`` when everyone may; else the principals the permission bits let in."""
        others, group, owner = bits
        if st.st_mode & others == others:
            return None
        out = set()
        if st.st_mode & owner == owner:
            out.add("user:" + _name(pwd.getpwuid, st.st_uid))
        if st.st_mode & group == group:
            out.add("group:" + _name(grp.getgrgid, st.st_gid))
        return frozenset(out)

    def _folder(self, folder: str) -> frozenset[str] | None:
        if folder not in self._folders:
            try:
                self._folders[folder] = self._allowed(os.stat(folder), _FOLDER)
            except OSError:
                self._folders[folder] = frozenset()  # cannot be checked: nobody, not everybody
        return self._folders[folder]

    def of(self, path: str | Path, st: os.stat_result) -> tuple[str, ...]:
        """The readers of the file at ``path`` (absolute; ``st``: its stat), sorted; ``("*",)``
        when public."""
        kept = _both(self._allowed(st, _FILE), self._chain(os.path.dirname(str(path))))
        return (PUBLIC,) if kept is None else tuple(sorted(kept))

    def _chain(self, folder: str) -> frozenset[str] | None:
        """Who may pass ``folder`` and every folder above it (once per folder: files share them)."""
        todo = []  # from ``folder`` up to the first folder known (or the root)
        while folder not in self._chains:
            todo.append(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        above = self._chains.get(folder)
        for step in reversed(todo):
            above = self._chains[step] = _both(self._folder(step), above)
        return above


def _both(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The principals both let in (``None``: everyone)."""
    return b if a is None else a if b is None else a & b
