"""What the doors serve: the door-facing layer over one ``Session`` per worker process.

The MCP server (``doors/mcp.py``) and the HTTP API (``doors/http.py``) are thin: each tool or
endpoint validates its arguments, calls one method here and renders the result. ``Service`` owns
nothing: argument checks for callers over a network, and the mapping of library errors to door
statuses (``doorerrors.classify``). Every long-lived resource (the provider state, the HTTP client, the page
fetcher and its cache, the open sources) belongs to the one ``Session`` it is given, so that
concurrent requests share them, and several worker processes share the state through the SQLite
files or Redis (``redis_url``, ``SOURCEWISE_REDIS_URL``).

Adding a capability (``search``, ``ask``, ``retrieve`` as they land): one method on ``Service``
in the section marked below, then one tool in ``doors/mcp.py`` and one endpoint in ``doors/http.py``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sourcewise import access
from sourcewise._version import __version__
from sourcewise.doors.errors import NO_SOURCES, NoSourceAnswered, door_text
from sourcewise.doors.safe import for_remote, hidden_paths, safe_reports
from sourcewise.effort import EffortLevel
from sourcewise.errors import (
    InvalidOption,
    SourcewiseError,
)
from sourcewise.loops.ask import aask
from sourcewise.loops.retrieve import aretrieve
from sourcewise.models import (
    Answer,
    Page,
    Retrieval,
    Route,
    SearchResponse,
    SourceReport,
    SourceResult,
    _Model,
    failed_everywhere,
)
from sourcewise.planning.routing import route as _route
from sourcewise.planning.validate import validate_query
from sourcewise.session import Session
from sourcewise.sources.api import asearch_sources
from sourcewise.web.pages import build_page
from sourcewise.web.urls import canonical_url

__all__ = [
    "DOOR_MAX_CHARS",
    "DoorSettings",
    "Health",
    "Progress",
    "Service",
]

log = logging.getLogger("sourcewise")
DOOR_MAX_CHARS = 100_000  # the largest page slice one call may ask for
Progress = Callable[[float, float, str], Awaitable[None]]
_NUMBER = re.compile("[0-9]{1,4}")


async def _no_progress(_done: float, _total: float, _message: str) -> None:
    return None


class DoorSettings(BaseSettings):
    """Knobs of the doors only (not of the library), from ``SOURCEWISE_*`` environment variables
    or the ``sourcewise serve`` / ``sourcewise mcp --http`` options."""

    model_config = SettingsConfigDict(env_prefix="SOURCEWISE_", extra="ignore", frozen=True)

    api_key: SecretStr | None = Field(
        default=None, description="clients must send it (Authorization: Bearer KEY or X-API-Key)"
    )
    rate_limit: float = Field(default=120.0, ge=0, description="requests per minute per client; 0: none")
    rate_burst: int = Field(default=30, ge=1, description="requests a client may send at once")
    max_body_bytes: int = Field(default=65_536, ge=1024, description="largest request body accepted")
    request_timeout: float = Field(default=60.0, gt=0, le=600, description="seconds one request may take")
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="MCP over HTTP: Host header values accepted besides loopback (host or host:port, "
        "comma-separated), e.g. the public name behind a reverse proxy; * turns the DNS-rebinding check off",
    )

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class Health(_Model):
    """What ``/health`` says: up, the version, and which providers could answer now."""

    status: str = "ok"
    version: str = __version__
    providers_ready: list[str] = Field(default_factory=list)
    providers_suspended: list[str] = Field(default_factory=list)
    store: str = Field(description="where the page cache and suspensions live: sqlite or redis")
    worker: int = Field(default_factory=os.getpid, description="the process id of the worker that answered")


class Service:
    """The library's capabilities for the doors, over one ``Session`` (the caller closes it)."""

    def __init__(self, session: Session, doors: DoorSettings | None = None) -> None:
        self.session = session
        self.settings = session.settings
        self.doors = doors or DoorSettings()
        self.hidden = hidden_paths(self.settings)  # what no error over a door may show

    def warm(self) -> None:
        """At a door's start: each source ``ask`` reads by default starts loading what it will
        need (the semantic model, in the background), so that the first caller does not wait."""
        from sourcewise.loops.ask import default_sources

        try:
            for source in self.session.sources(list(default_sources(self.settings))):
                source.warm()
        except SourcewiseError as exc:  # the first call that needs the source says it to the caller
            log.warning("could not prepare the default sources: %s", exc)

    def health(self) -> Health:
        rows = self.session.engine.status()
        return Health(
            providers_ready=[r.name for r in rows if r.in_chain and r.configured and not r.suspended_until],
            providers_suspended=[r.name for r in rows if r.suspended_until],
            store=self.session.store,
        )

    async def web_search(
        self,
        query: str,
        *,
        tier: int | None = None,
        max_results: int | None = None,
        strategy: str = "default",
        progress: Progress = _no_progress,
    ) -> SearchResponse:
        """The provider chain; results rated, de-duplicated and ranked (``sourcewise.asearch``)."""
        access.require_web(self.settings)
        door_text(query, "the query")
        await progress(0, 1, f"searching the web for {validate_query(query)!r}")
        response = await self.session.engine.asearch(
            query, tier=tier, max_results=max_results, strategy=strategy
        )
        await progress(1, 1, f"{len(response.results)} results from {response.provider}")
        return response

    async def web_fetch(
        self,
        url: str,
        *,
        prompt: str | None = None,
        start: int = 0,
        max_chars: int | None = None,
        progress: Progress = _no_progress,
    ) -> Page:
        """One slice of a page. The operator's ``allow_private`` decides the address guard, never
        the caller; the next slice of a page read within ``cache_ttl`` comes from the cache."""
        access.require_web(self.settings)
        door_text(prompt, "the prompt")
        canonical_url(url)
        size = self.settings.max_chars if max_chars is None else max_chars
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise InvalidOption(f"start must be 0 or more, got {start!r}")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= DOOR_MAX_CHARS:
            raise InvalidOption(f"max_chars must be from 1 to {DOOR_MAX_CHARS}, got {max_chars!r}")
        await progress(0, 2, "fetching the page")
        doc, cached = await self.session.fetcher.document(url, allow_private=self.settings.allow_private)
        await progress(1, 2, "read from the cache" if cached else "fetched and extracted")
        page = build_page(
            doc, url, prompt=prompt, start=start, max_chars=size, from_cache=cached, table=self.session.table
        )
        await progress(2, 2, f"{page.total_chars} characters")
        return page

    async def route(self, question: str) -> Route:
        """Search the web, fetch the URLs in the question, or skip it (seed 001)."""
        door_text(question, "the question")
        return _route(question, settings=self.settings)

    # -- private sources, ask and retrieve -------------------------------------------------------
    def door_sources(
        self, sources: Sequence[str] | None, default: Sequence[str] | None = None
    ) -> list[str] | None:
        """Only configured names, ``kb`` and ``web`` cross a network door: a spec such as
        ``code:/etc`` would let a remote caller read the server's files. With ``[access]``
        sections, only the caller's own sources (``access.check``, which names no other)."""
        if sources is not None and not sources:
            raise InvalidOption(NO_SOURCES)
        if access.grants(self.settings):
            return access.check(self.settings, sources, default)
        if sources is None:
            return None if default is None else list(default)
        allowed = {*self.settings.sources, "kb", "web"}
        bad = [s for s in sources if s not in allowed]
        if bad:
            raise InvalidOption(
                f"unknown source(s) {', '.join(map(repr, bad[:5]))}: over this door only configured "
                f"names are accepted ({', '.join(sorted(allowed))})"
            )
        return list(sources)

    async def search_sources(
        self, query: str, sources: Sequence[str] | None = None, *, limit: int = 10
    ) -> list[SourceResult]:
        """Search private sources with a query in their own syntax (``sourcewise.search_sources``)."""
        door_text(query, "the query")
        chosen = self.door_sources(sources, ["kb"]) or ["kb"]
        return await asearch_sources(query, chosen, limit=limit, session=self.session)

    async def ask(
        self,
        question: str,
        *,
        sources: Sequence[str] | None = None,
        reading: str | int | None = None,
        effort: EffortLevel = "balanced",
        progress: Progress = _no_progress,
    ) -> Answer:
        """One question across every source, cited (``sourcewise.aask``). ``reading``: after a
        clarifying question, the chosen reading's number (from 1) or label, as the CLI's choice.
        ``NoSourceAnswered`` when every source failed (partial failures are in the reports)."""
        chosen = self.door_sources(sources)
        door_text(question, "the question")
        door_text(reading if isinstance(reading, str) else None, "the reading")
        done = 0

        async def report(item: SourceReport | str) -> None:
            nonlocal done
            done += 1
            text = (
                f"{item.source}: {item.status} ({item.hits} results)"
                if isinstance(item, SourceReport)
                else item
            )
            await progress(done, done + 1, text)

        session = self.session
        if isinstance(reading, bool):
            raise InvalidOption("reading is a number (from 1) or a label, not true or false")
        label = reading
        if isinstance(reading, int) or (isinstance(reading, str) and _NUMBER.fullmatch(reading.strip())):
            # A number picks from the readings a first pass finds, as the CLI's prompt does.
            first = _answered(
                await aask(question, sources=chosen, effort=effort, session=session, progress=report)
            )
            label = _pick_reading(first, int(reading))
        if label is not None and not isinstance(label, str):
            raise InvalidOption(f"reading is a number or a label, got {type(label).__name__}")
        answer = await aask(
            question, sources=chosen, reading=label, effort=effort, session=session, progress=report
        )
        said = {
            "reports": safe_reports(answer.reports, self.hidden),
            "warnings": tuple(map(for_remote, answer.warnings)),  # a page of the question it refused
        }
        return _answered(answer).model_copy(update=said)

    async def retrieve(
        self,
        task: str,
        *,
        sources: Sequence[str] | None = None,
        max_cycles: int = 3,
        progress: Progress = _no_progress,
    ) -> Retrieval:
        """Iterative retrieval over private sources (``sourcewise.aretrieve``); default: ``kb``."""
        door_text(task, "the task")
        chosen = self.door_sources(sources, ["kb"]) or ["kb"]
        await progress(0, max_cycles, f"retrieving for {task[:80]!r}")
        found = await aretrieve(task, sources=chosen, max_cycles=max_cycles, session=self.session)
        cycles = [
            c.model_copy(update={"reports": safe_reports(c.reports, self.hidden)}) for c in found.cycles
        ]
        result = _retrieved(found).model_copy(update={"cycles": tuple(cycles)})
        await progress(max_cycles, max_cycles, f"{len(result.candidates)} candidates")
        return result


def _answered(answer: Answer) -> Answer:
    """``answer``, or ``NoSourceAnswered`` when nothing was found because every source failed."""
    if not answer.hits and not answer.clarification and failed_everywhere(answer.reports):
        raise NoSourceAnswered(answer.reports)
    return answer


def _retrieved(result: Retrieval) -> Retrieval:
    """``result``, or ``NoSourceAnswered`` when no cycle's source answered (as ``ask``)."""
    reports = [r for cycle in result.cycles for r in cycle.reports]
    if not result.candidates and failed_everywhere(reports):
        raise NoSourceAnswered(result.cycles[0].reports)
    return result


def _pick_reading(first: Answer, number: int) -> str:
    """The label of reading ``number`` (from 1) of ``first``; ``InvalidOption`` naming the choices."""
    if not first.readings:
        raise InvalidOption(
            f"reading {number}: this question has no readings to choose from; ask again without a reading"
        )
    if not 1 <= number <= len(first.readings):
        labels = ", ".join(f"{i} {r.label!r}" for i, r in enumerate(first.readings, 1))
        raise InvalidOption(f"reading must be 1-{len(first.readings)} ({labels}) or a label, got {number}")
    return first.readings[number - 1].label
