"""What a door says when something is wrong: checks of a caller's text, pydantic's complaints in
one line, and a library error as a status and a typed reason (``classify``). Shared by the HTTP
API, the MCP server and the web page, so that every door says the same."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sourcewise import access
from sourcewise.doors.safe import door_safe, for_remote, safe_reports
from sourcewise.errors import (
    AddressNotAllowed,
    ConfigError,
    FetchError,
    FetchTimeout,
    IndexDamaged,
    IndexVersionError,
    IndexWriteError,
    InvalidInput,
    InvalidQuery,
    ModelError,
    NoProviderAvailable,
    ProviderError,
    RobotsDisallowed,
    SourceError,
    SourceRateLimited,
    SourceUnavailable,
    SourcewiseError,
    StoreUnavailable,
)
from sourcewise.models import SourceReport

__all__ = ["NO_SOURCES", "Failure", "NoSourceAnswered", "classify", "describe_problems", "door_text"]

log = logging.getLogger("sourcewise")
NO_SOURCES = "give at least one source or leave it out"
# C0 controls but tab, newline and carriage return; DEL and the C1 controls. A NUL in a query
# would reach a provider's URL or a database; such text is a caller's mistake, not a query.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def door_text(text: str | None, what: str) -> str | None:
    """``text`` unchanged, or ``InvalidQuery`` when it holds a control character (both doors)."""
    if isinstance(text, str) and (bad := _CONTROL.search(text)):
        raise InvalidQuery(
            f"{what} holds a control character (U+{ord(bad.group()):04X} at {bad.start()}); remove it"
        )
    return text


def describe_problems(errors: Sequence[Mapping[str, Any]]) -> str:
    """Pydantic's errors as one line per door, ``field: what is wrong; ...`` (no links, no input
    values): the HTTP API's 422 and the MCP tool error say the same."""
    by_field: dict[str, list[str]] = {}
    for err in errors:
        loc = [p for p in err.get("loc", ()) if p != "body"]
        # The field and any list index; not pydantic's union tags (reading.int, reading.str).
        parts = [str(p) for i, p in enumerate(loc) if i == 0 or isinstance(p, int)]
        name = ".".join(parts) or "arguments"
        msg = str(err.get("msg", "invalid"))
        if err.get("type") == "json_invalid":  # pydantic says "0: JSON decode error"
            name, msg = "body", "not valid JSON; send one JSON object with Content-Type: application/json"
        if err.get("type") == "too_short" and parts == ["sources"]:
            msg = NO_SOURCES
        if msg not in by_field.setdefault(name, []):
            by_field[name].append(msg)
    return "; ".join(f"{name}: {' or '.join(msgs)}" for name, msgs in by_field.items())


class NoSourceAnswered(SourceUnavailable):
    """Every source of an ``ask`` failed (a door's 503): ``reports`` says why, per source."""

    def __init__(self, reports: Sequence[SourceReport]) -> None:
        self.reports = tuple(reports)
        why = "; ".join(
            f"{r.source} {r.status.replace('_', ' ')} ({r.error or 'no detail'})" for r in reports
        )
        super().__init__(", ".join(r.source for r in reports), f"no source could answer: {why}")


@dataclass(frozen=True)
class Failure:
    """A library error as a door reports it: an HTTP status, the error's type and message."""

    status: int
    kind: str
    message: str
    extra: dict[str, Any] = field(default_factory=dict)


def classify(exc: SourcewiseError, hidden: Sequence[str] = ()) -> Failure:
    """The status and typed reason for ``exc``. Messages never hold a key or a stack trace, and
    a source's never a file path or URL (``doorsafe``; ``hidden``: the paths the server knows)."""
    kind, message = type(exc).__name__, for_remote(str(exc))
    if isinstance(exc, access.AccessDenied):
        return Failure(401, "Unauthorized", message)
    if isinstance(exc, access.NotPermitted):
        return Failure(403, "Forbidden", message)
    if isinstance(exc, SourceError):
        log.warning("%s: %s", kind, message)  # the operator's log keeps the detail
        message = door_safe(message, hidden)
    if isinstance(exc, InvalidInput):
        return Failure(400, kind, message)
    if isinstance(exc, NoProviderAvailable):
        tried = [{"provider": name, "reason": why} for name, why in exc.attempts]
        return Failure(503, kind, message, {"attempts": tried})
    if isinstance(exc, ProviderError):
        return Failure(502, kind, message, {"provider": exc.provider})
    if isinstance(exc, AddressNotAllowed | RobotsDisallowed):
        return Failure(403, kind, message)
    if isinstance(exc, FetchTimeout):
        return Failure(504, kind, message)
    if isinstance(exc, FetchError):
        status = getattr(exc, "status", None)
        return Failure(502, kind, message, {"upstream_status": status} if status else {})
    if isinstance(exc, ConfigError):
        return Failure(503, kind, f"the server's configuration is invalid: {message}")
    if isinstance(exc, StoreUnavailable):
        return Failure(503, kind, message)
    if isinstance(exc, NoSourceAnswered):
        reports = [
            {
                "source": r.source,
                "kind": r.kind,
                "status": r.status,
                "error": r.error,
                "retry_after": r.retry_after,
            }
            for r in safe_reports(exc.reports, hidden)
        ]
        return Failure(503, kind, message, {"reports": reports})
    if isinstance(exc, SourceRateLimited):
        return Failure(429, kind, message, {"source": exc.source, "retry_after": exc.retry_after})
    if isinstance(exc, SourceUnavailable | IndexVersionError | IndexDamaged | IndexWriteError):
        return Failure(503, kind, message, {"source": exc.source})
    if isinstance(exc, SourceError | ModelError):
        return Failure(502, kind, message)
    return Failure(500, kind, message)
