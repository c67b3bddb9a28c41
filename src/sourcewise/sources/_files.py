"""Opening what a user pointed a source at, without trusting it: only folders and regular files.

An export path (a Slack zip, an mbox, a GitHub JSON dump) comes from configuration or a command line,
and what sits there is outside our control: a FIFO blocks ``open`` until a writer comes (forever),
``/dev/zero`` never ends, a socket cannot be read. ``export_kind`` looks before anything opens it
(``os.stat`` follows a symlink, so a link to a device is judged by the device), and ``read_capped``
opens without blocking and checks what it opened, so a file swapped for a FIFO between the look and
the read is refused too. ``shown`` turns a name that is not UTF-8 (kept by Python as surrogate
escapes) into printable text, so it can be stored, indexed and shown.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal

from sourcewise.errors import SourceFormatError, SourceUnavailable

__all__ = ["export_kind", "file_kind", "open_regular", "read_capped", "shown"]


def export_kind(source: str, path: Path) -> Literal["dir", "file"]:
    """``"dir"`` or ``"file"`` for what ``path`` is; a typed error for anything else or nothing."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError as exc:
        raise SourceUnavailable(source, f"{shown(str(path))} does not exist") from exc
    except OSError as exc:
        raise SourceUnavailable(source, f"{shown(str(path))} cannot be read: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    kind = file_kind(mode)
    raise SourceFormatError(source, f"{shown(path.name)} is not a folder nor a regular file ({kind})")


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; an ``OSError`` for anything else.

    The file is opened non-blocking (a FIFO put there after a check does not hang the open) and its
    type comes from the open descriptor, not from a look at the path before.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    handle = os.fdopen(fd, "rb")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        handle.close()
        raise OSError(errno.EINVAL, f"{shown(path.name)} is {file_kind(mode)}")
    return handle


def read_capped(path: Path, cap: int) -> bytes | None:
    """The bytes of the regular file at ``path``, or ``None`` when it holds more than ``cap`` bytes.

    At most ``cap + 1`` bytes are read whatever the size said, so a file that grows while it is read
    is refused too.
    """
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > cap:
            return None
        # A read of n bytes allocates n first: ask for the size said (and one more, to see a file
        # that grew), then go on to the cap only for a file that did grow.
        data = handle.read(size + 1)
        if len(data) > size:
            data += handle.read(cap + 1 - len(data))
    return None if len(data) > cap else data


def shown(name: str) -> str:
    """``name`` with undecodable bytes as ``\\xff`` escapes (and stray surrogates as ``\\udXXX``)."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def file_kind(mode: int) -> str:
    for test, label in (
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):  # fmt: skip
        if test(mode):
            return label
    return "not a regular file"
