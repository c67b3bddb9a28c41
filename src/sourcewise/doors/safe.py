"""What a source's failure may say to a remote caller: its name, kind and why, never where.

A source's error is written for the person who configured it (``gone: /srv/mail/x does not
exist``); a caller over HTTP or MCP gets the same sentence with every file path and URL replaced
(``gone: <path> does not exist``), and the operator's log keeps the original. The paths the
server knows (each configured source's ``path``, the state folder) are replaced by name first, so
a path holding spaces goes whole; any other absolute path, home-relative path or URL is then cut
at the first space. The patterns have no nested repetition: linear in the text's length.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sourcewise.config import Settings
from sourcewise.errors import AddressNotAllowed
from sourcewise.models import SourceReport

__all__ = ["door_safe", "for_remote", "hidden_paths", "safe_reports"]

log = logging.getLogger("sourcewise")

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s'\"<>]*")
# a path starts after a space, a quote, a bracket, '=', ':' or '>' (or at the start): /x, ~/x, C:\x, \\host\x
_PATH = re.compile(r"(?<![^\s'\"(\[=:,>])(?:~|[A-Za-z]:)?[/\\][^\s'\"<>]*")


def hidden_paths(settings: Settings) -> tuple[str, ...]:
    """The paths a door must never show: the configured sources' and the state folder, longest
    first (a folder and a file inside it: the file goes whole)."""
    found: set[str] = {str(settings.state_dir)}
    for options in settings.sources.values():
        path = options.get("path") if isinstance(options, dict) else None
        if path:
            found.add(str(path))
            found.add(str(Path(str(path)).expanduser()))
    return tuple(sorted(found, key=len, reverse=True))


def for_remote(text: str) -> str:
    """``text`` with each fix only the operator can apply said as such: a caller over a door
    cannot pass ``allow_private`` (``AddressNotAllowed.LOCAL_FIX`` -> ``REMOTE_FIX``)."""
    return text.replace(AddressNotAllowed.LOCAL_FIX, AddressNotAllowed.REMOTE_FIX)


def door_safe(text: str, hidden: Iterable[str] = ()) -> str:
    """``text`` without file paths and URLs (see the module), its fixes said for a remote caller."""
    text = for_remote(text)
    for path in hidden:
        if len(path) > 1:
            text = text.replace(path, "<path>")
    text = _URL.sub("<url>", text)
    return _PATH.sub("<path>", text)


def safe_reports(reports: Sequence[SourceReport], hidden: Sequence[str]) -> tuple[SourceReport, ...]:
    """``reports`` with their errors and warnings door-safe; each original error is logged once."""
    out = []
    for r in reports:
        if r.error:
            log.warning("source %s (%s) %s: %s", r.source, r.kind, r.status, r.error)
        update: dict[str, Any] = {
            "error": door_safe(r.error, hidden) if r.error else r.error,
            "warnings": tuple(door_safe(w, hidden) for w in r.warnings),
        }
        out.append(r.model_copy(update=update))
    return tuple(out)
