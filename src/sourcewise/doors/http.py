"""The HTTP API: FastAPI over the same ``Service`` as the MCP server.

``sourcewise serve`` runs it under uvicorn; ``uvicorn --factory sourcewise.doors.http:create_app
--workers N`` runs several workers (settings come from the environment and the config file).
Every error is ``{"error": {"type", "message", "status"}}``: bad input 400/422, a missing key
401, too many requests 429, too large a body 413, provider failures 502/503 with the typed
reason (an ``ask`` whose every source failed: 503 with each source's report), a page the guard
refuses 403, a time-out 504. Never a stack trace.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp

from sourcewise._version import __version__
from sourcewise.access import grants
from sourcewise.config import Settings, load_settings
from sourcewise.doors import page as webpage
from sourcewise.doors.errors import classify, describe_problems
from sourcewise.doors.formats import Format
from sourcewise.doors.guards import guarded
from sourcewise.doors.present import render_answer
from sourcewise.doors.service import DOOR_MAX_CHARS, DoorSettings, Health, Service
from sourcewise.effort import effort_help
from sourcewise.errors import SourcewiseError
from sourcewise.models import Answer, Page, Retrieval, Route, SearchResponse, SourceResult
from sourcewise.session import Session

__all__ = [
    "AskRequest",
    "AskResponse",
    "FetchRequest",
    "RouteRequest",
    "SearchRequest",
    "build_api",
    "create_app",
]

log = logging.getLogger("sourcewise")
T = TypeVar("T")


class _Request(BaseModel):
    # strict: JSON true is not the integer 1 and "3" is not 3; a caller's mistake is a 422, not a guess.
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchRequest(_Request):
    query: str = Field(min_length=1, max_length=500, description="what to search for (3-500 characters)")
    tier: int | None = Field(default=None, ge=1, le=4, description="only this tier (1-4)")
    max_results: int | None = Field(default=None, ge=1, le=50, description="results wanted (1-50)")
    strategy: Literal["default", "official", "comprehensive", "progressive"] = "default"


class FetchRequest(_Request):
    url: str = Field(min_length=1, max_length=2048, description="absolute http(s) URL")
    prompt: str | None = Field(default=None, max_length=1000, description="passages answering this first")
    start: int = Field(default=0, ge=0, le=10**9, description="character offset of the slice (next_start)")
    max_chars: int | None = Field(default=None, ge=1, le=DOOR_MAX_CHARS, description="slice length")


class RouteRequest(_Request):
    question: str = Field(min_length=1, max_length=2000, description="the user's question")


KB_SOURCES = "configured source names; leave it out for the knowledge base (kb), or the key's own sources"
EFFORT_HELP = effort_help()


class SourcesSearchRequest(_Request):
    query: str = Field(min_length=1, max_length=4000, description="words plus the sources' filters")
    sources: list[str] | None = Field(default=None, min_length=1, max_length=32, description=KB_SOURCES)
    limit: int = Field(default=10, ge=1, le=50)


class AskRequest(_Request):
    question: str = Field(min_length=1, max_length=2000, description="the user's question")
    sources: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=32,
        description="configured source names; leave it out for every configured source (plus the web "
        "when the question needs it)",
    )
    format: Format = Field(
        default="json",
        description="json: the answer alone; quick, deep or progressive: also `rendered`, the answer as "
        "text in that form (as `sourcewise ask --format`)",
    )
    reading: int | str | None = Field(
        default=None,
        description="after a clarifying question: the number (from 1) or the label of the reading meant",
    )
    effort: Literal["quick", "balanced", "thorough"] = Field(default="balanced", description=EFFORT_HELP)


class AskResponse(Answer):
    """The answer, and its text rendering when a format other than json was asked for."""

    rendered: str | None = Field(default=None, description="the answer in the requested text format")


class RetrieveRequest(_Request):
    task: str = Field(min_length=1, max_length=2000, description="what the caller is trying to do")
    sources: list[str] | None = Field(default=None, min_length=1, max_length=32, description=KB_SOURCES)
    max_cycles: int = Field(default=3, ge=1, le=5)


class ErrorDetail(BaseModel):
    type: str = Field(description="the error's type, e.g. InvalidQuery, NoProviderAvailable")
    message: str
    status: int
    attempts: list[dict[str, str]] | None = None
    reports: list[dict[str, str | float | None]] | None = Field(
        default=None, description="an ask whose every source failed: each source's status and reason"
    )


class ErrorBody(BaseModel):
    error: ErrorDetail


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": why}
    for code, why in {
        400: "bad input",
        401: "missing or wrong API key",
        413: "request body too large",
        422: "request does not match the schema",
        429: "rate limited (see Retry-After)",
        502: "a provider or the page failed",
        503: "no provider could answer (for ask: no source could; see reports)",
        504: "time-out",
    }.items()
}


def _error(
    status: int, kind: str, message: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> JSONResponse:
    body = {"error": {"type": kind, "message": message, "status": status, **extra}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _service(request: Request) -> Service:
    # async: a plain function dependency would cost every request a hop through the thread pool
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(_service)]


async def _limited(service: Service, work: Awaitable[T]) -> T:
    async with asyncio.timeout(service.doors.request_timeout):
        return await work


def build_api(settings: Settings | None = None, doors: DoorSettings | None = None) -> FastAPI:
    """The FastAPI app alone (no key, rate or body guard: ``create_app`` adds those)."""
    doors = doors or DoorSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # One session per worker process: its client, stores and open sources serve every request.
        async with Session(settings, lasting=True) as session:
            app.state.service = Service(session, doors)
            app.state.service.warm()
            yield

    # Swagger UI and ReDoc from the assets fastapi-offline ships: /docs and /redoc work offline.
    api = FastAPIOffline(
        title="sourcewise",
        version=__version__,
        description="Cited answers from the team's private sources and the web (`/ask`), search of "
        "the private sources (`/sources/search`), iterative retrieval for a task (`/retrieve`), web "
        "search with source tiers (`/web/search`), page fetching in slices (`/web/fetch`), routing "
        "(`/route`) and `/health`; a web page to ask from at `/`. The names match the CLI and the "
        "MCP tools (docs/doors.md). Send the API key as `Authorization: Bearer KEY` when the server has one.",
        lifespan=lifespan,
    )
    _handlers(api)
    api.include_router(webpage.router)
    _web_endpoints(api)
    _source_endpoints(api)
    return api


def _web_endpoints(api: FastAPI) -> None:
    """The web's endpoints: search, fetch and route."""

    @api.post("/web/search", response_model=SearchResponse, responses={**ERRORS, 403: {"model": ErrorBody}})
    @api.post("/search", response_model=SearchResponse, responses=ERRORS, include_in_schema=False)
    async def web_search(body: SearchRequest, service: ServiceDep) -> SearchResponse:
        """Search the web: results rated by tier (1 official ... 4 blogs), de-duplicated, ranked."""
        return await _limited(
            service,
            service.web_search(
                body.query, tier=body.tier, max_results=body.max_results, strategy=body.strategy
            ),
        )

    @api.post("/web/fetch", response_model=Page, responses={**ERRORS, 403: {"model": ErrorBody}})
    @api.post("/fetch", response_model=Page, responses=ERRORS, include_in_schema=False)
    async def web_fetch(body: FetchRequest, service: ServiceDep) -> Page:
        """Read one page: main content as Markdown, rated; long pages in slices (``next_start``)."""
        return await _limited(
            service,
            service.web_fetch(body.url, prompt=body.prompt, start=body.start, max_chars=body.max_chars),
        )

    @api.post("/route", response_model=Route, responses=ERRORS)
    async def route(body: RouteRequest, service: ServiceDep) -> Route:
        """Does the question need the web? search, fetch (its URLs) or skip, and why."""
        return await _limited(service, service.route(body.question))


def _source_endpoints(api: FastAPI) -> None:
    """The private sources' endpoints (search, ask, retrieve) and health."""

    @api.post("/sources/search", response_model=list[SourceResult], responses=ERRORS)
    async def sources_search(body: SourcesSearchRequest, service: ServiceDep) -> list[SourceResult]:
        """Search configured private sources with a query in their own filter syntax."""
        return await _limited(service, service.search_sources(body.query, body.sources, limit=body.limit))

    @api.post("/ask", response_model=AskResponse, responses=ERRORS)
    async def ask(body: AskRequest, service: ServiceDep) -> AskResponse:
        """One question across every source: cited sentences, the sources, each source's report.
        Some sources failing is a 200 with their reports; every source failing is a 503."""
        answer = await _limited(
            service,
            service.ask(body.question, sources=body.sources, reading=body.reading, effort=body.effort),
        )
        rendered = None if body.format == "json" else render_answer(answer, body.format)
        return AskResponse(**dict(answer), rendered=rendered)

    @api.post("/retrieve", response_model=Retrieval, responses=ERRORS)
    async def retrieve(body: RetrieveRequest, service: ServiceDep) -> Retrieval:
        """Iterative retrieval (seed 004): candidates scored 0-1 with reasons, and every cycle."""
        work = service.retrieve(body.task, sources=body.sources, max_cycles=body.max_cycles)
        return await _limited(service, work)

    @api.get("/health", response_model=Health)
    async def health(service: ServiceDep) -> Health:
        """Up, the version, and which providers could answer now (no key needed)."""
        return service.health()


def _handlers(api: FastAPI) -> None:
    @api.exception_handler(SourcewiseError)
    async def library_error(request: Request, exc: SourcewiseError) -> JSONResponse:
        service = getattr(request.app.state, "service", None)
        failure = classify(exc, service.hidden if service is not None else ())
        return _error(failure.status, failure.kind, failure.message, **failure.extra)

    @api.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = describe_problems(exc.errors())
        return _error(422, "InvalidRequest", problems or "the request does not match the schema")

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = (
            "InvalidRequest"
            if exc.status_code == 400
            else HTTPStatus(exc.status_code).phrase.replace(" ", "")
        )
        return _error(exc.status_code, kind, str(exc.detail), headers=exc.headers)

    @api.exception_handler(TimeoutError)
    async def timed_out(request: Request, _exc: TimeoutError) -> JSONResponse:
        limit = request.app.state.service.doors.request_timeout
        return _error(504, "Timeout", f"the request took longer than {limit:g} s; try again later")

    @api.exception_handler(Exception)
    async def crashed(_request: Request, exc: Exception) -> JSONResponse:
        log.error("request failed unexpectedly", exc_info=exc)
        return _error(500, "InternalError", "internal error; the server logged the details")


def create_app(settings: Settings | None = None, doors: DoorSettings | None = None) -> ASGIApp:
    """The app factory (``uvicorn --factory sourcewise.doors.http:create_app``): the API behind the
    key, the per-client rate limit and the body limit; /health and the API's documentation stay open."""
    doors, settings = doors or DoorSettings(), settings or load_settings()
    return guarded(build_api(settings, doors), doors, open_paths=OPEN_PATHS, grants=grants(settings))


DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
DOCS = ("/docs", "/redoc", "/openapi.json", *(f"/static-offline-docs/{a}" for a in DOCS_ASSETS))
OPEN_PATHS = ("/health", *DOCS)
