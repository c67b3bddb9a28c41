"""The MCP server: sourcewise's capabilities as tools for agents (official ``mcp`` SDK, 2.x).

``sourcewise mcp`` serves stdio (Claude Code, Gemini CLI, Cursor ...); ``sourcewise mcp --http``
serves Streamable HTTP at ``/mcp``. Each tool is a few lines over one ``Service`` method and
answers twice: structured content (with the model's JSON schema) and a compact text rendering
that fits an agent's context. A failure is a tool error whose text names the error type and
what to do; the server itself never stops on a bad call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, StrictInt, ValidationError
from starlette.types import ASGIApp

from sourcewise import access
from sourcewise._version import __version__
from sourcewise.config import Settings, load_settings
from sourcewise.doors.errors import classify, describe_problems
from sourcewise.doors.formats import Format
from sourcewise.doors.mcp_text import (
    SEARCH_BUDGET,
    STRUCTURED_BUDGET,
    answer_text,
    cut_to,
    fit,
    render_search,
)
from sourcewise.doors.present import render_page, render_results, render_route
from sourcewise.doors.service import DOOR_MAX_CHARS, DoorSettings, Progress, Service
from sourcewise.effort import effort_help
from sourcewise.errors import SourcewiseError
from sourcewise.models import Answer, Page, Retrieval, Route, SearchResponse, SourceResult
from sourcewise.session import Session

__all__ = ["build_server", "create_http_app", "transport_security"]

log = logging.getLogger("sourcewise")
FETCH_DEFAULT = 8_000  # characters of page content per web_fetch call, unless asked otherwise
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)

INSTRUCTIONS = """sourcewise answers from the team's private sources (knowledge base, code, chat,
mail, issues) and the web, and says how far each source can be trusted: web tier 1 official docs,
2 semi-official, 3 community, 4 blogs and media, with a 0-100 reliability score.
Use `ask` for a cited answer to a question from every source at once (after a clarifying
question, call it again with `reading`); `search_sources` for raw hits from private sources in
their filter syntax; `retrieve` to find the files or passages a task needs; `route` when unsure
whether a question needs the web; `web_search` to find pages; `web_fetch` to read one page (long
pages come in slices: pass the `start` it gives you)."""

Ctx = Context[Service, Any]


def _service(ctx: Ctx) -> Service:
    return ctx.request_context.lifespan_context


def _progress(ctx: Ctx) -> Progress:
    async def report(done: float, total: float, message: str) -> None:
        await ctx.report_progress(done, total, message)

    return report


@asynccontextmanager
async def _tool_call(ctx: Ctx) -> AsyncIterator[Service]:
    """The service, under the request time limit. A library error becomes a tool error the model
    can act on; anything else is logged and reported without its details (they may hold
    internals), and the server carries on."""
    service = _service(ctx)
    limit = service.doors.request_timeout
    request = ctx.request_context.request  # over HTTP: the guard left the caller's grant in its scope
    grant = request.scope.get(access.SCOPE_KEY) if request is not None else None
    try:
        async with asyncio.timeout(limit):
            with access.bound(grant):
                yield service
    except SourcewiseError as exc:
        failure = classify(exc, service.hidden)
        raise ToolError(f"{failure.kind}: {failure.message}") from exc
    except ToolError:
        raise
    except TimeoutError as exc:
        raise ToolError(f"Timeout: the call took longer than {limit:g} s; try again later") from exc
    except Exception as exc:
        log.exception("tool failed unexpectedly")
        raise ToolError(f"internal error ({type(exc).__name__}); the server logged the details") from exc


def _result(
    model: BaseModel, text: str, *, keep: str | None = None, budget: int = STRUCTURED_BUDGET
) -> CallToolResult:
    data = fit(model.model_dump(mode="json"), budget, keep)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


Query = Annotated[
    str, Field(max_length=500, description="what to search for, as you would type it (3-500 characters)")
]
TierArg = Annotated[
    StrictInt | None,
    Field(default=None, ge=1, le=4, description="only this tier: 1 official docs ... 4 blogs"),
]
Strategy = Literal["default", "official", "comprehensive", "progressive"]
DetailArg = Annotated[
    Literal["compact", "full"],
    Field(
        description="compact: one line per result (title, location, tier or source) and hit texts cut "
        "to their snippets in the structured result; full: snippets and whole texts"
    ),
]
EffortArg = Annotated[
    Literal["quick", "balanced", "thorough"],
    Field(description=effort_help()),
]


async def web_search(
    query: Query,
    ctx: Ctx,
    tier: TierArg = None,
    max_results: Annotated[StrictInt, Field(ge=1, le=50, description="results wanted (1-50)")] = 10,
    strategy: Annotated[
        Strategy,
        Field(
            description="default: best first; official: official docs, widened while too few; "
            "comprehensive: the best 3 of each tier; progressive: official first, then examples"
        ),
    ] = "default",
    detail: DetailArg = "full",
) -> Annotated[CallToolResult, SearchResponse]:
    """Search the web. Each result has its tier (1 official docs, 2 semi-official, 3 community,
    4 blogs/media), a 0-100 reliability score and why; duplicates are merged. Use it to find
    pages; then read one with web_fetch."""
    async with _tool_call(ctx) as service:
        response = await service.web_search(
            query, tier=tier, max_results=max_results, strategy=strategy, progress=_progress(ctx)
        )
        if detail == "compact":
            return _result(response, render_search(response, compact=True), budget=0)
        return _result(response, render_search(response))


async def web_fetch(
    url: Annotated[str, Field(max_length=2048, description="the absolute http(s) URL of the page to read")],
    ctx: Ctx,
    prompt: Annotated[
        str | None,
        Field(max_length=1000, description="what you want from the page; its best passages come first"),
    ] = None,
    start: Annotated[
        StrictInt,
        Field(ge=0, le=10**9, description="character offset to read from (a previous answer gives it)"),
    ] = 0,
    max_chars: Annotated[
        StrictInt, Field(ge=100, le=DOOR_MAX_CHARS, description="characters of content to return")
    ] = FETCH_DEFAULT,
) -> Annotated[CallToolResult, Page]:
    """Read one web page: its main content as Markdown (HTML, PDF, JSON, text), its title, tier
    and reliability score. Long pages come in slices of max_chars: the answer says which start
    to pass for the next slice, served from a 15-minute cache rather than fetched again."""
    async with _tool_call(ctx) as service:
        page = await service.web_fetch(
            url, prompt=prompt, start=start, max_chars=max_chars, progress=_progress(ctx)
        )
        def more(at: int) -> str:
            return f"call web_fetch with url={page.url!r} and start={at}"

        return _result(page, render_page(page, more))


async def route(
    question: Annotated[str, Field(max_length=2000, description="the user's question, as asked")], ctx: Ctx
) -> Annotated[CallToolResult, Route]:
    """Decide whether a question needs the web: 'search' (recent or external facts, with the query
    to run), 'fetch' (it names URLs: read them with web_fetch) or 'skip' (answer from private or
    general knowledge). Costs no network request."""
    async with _tool_call(ctx) as service:
        decision = await service.route(question)
        return _result(decision, render_route(decision))


class SourceResults(BaseModel):
    """What each private source returned for the query."""

    results: list[SourceResult]


SourcesArg = Annotated[
    list[str] | None,
    Field(
        default=None,
        min_length=1,
        max_length=32,
        description="configured source names (e.g. kb, notes); leave it out for the knowledge base (kb)",
    ),
]
AskSourcesArg = Annotated[
    list[str] | None,
    Field(
        default=None,
        min_length=1,
        max_length=32,
        description="configured source names (e.g. kb, web); leave it out for every configured source, "
        "plus the web when the question needs it",
    ),
]
FormatArg = Annotated[
    Format,
    Field(
        description="the text rendering: quick (the answer and its sources), deep (every source with "
        "its factors), progressive (the answer, the top results, what to read next) or json; the "
        "structured result is the same whatever the format"
    ),
]
ReadingArg = Annotated[
    StrictInt | Annotated[str, Field(max_length=200)] | None,
    Field(
        default=None,
        description="after a clarifying question: the number (from 1) or the label of the reading meant",
    ),
]


async def search_sources(
    query: Annotated[str, Field(max_length=4000, description="words plus filters (from:, in:, after: ...)")],
    ctx: Ctx,
    sources: SourcesArg = None,
    limit: Annotated[StrictInt, Field(ge=1, le=50, description="results per source")] = 10,
    detail: DetailArg = "full",
) -> Annotated[CallToolResult, SourceResults]:
    """Search the team's private sources (knowledge base, code, chat, mail, issues) with a query in
    their own filter syntax (from:, in:, after:, before:, path:, label: ...). Filters a source
    cannot honour come back as warnings. Use ask for a cited answer instead of raw results."""
    async with _tool_call(ctx) as service:
        results = await service.search_sources(query, sources, limit=limit)
        wrapped = SourceResults(results=results)
        if detail == "compact":
            lines = [f"{h.source}: {h.title} - {h.location}" for r in results for h in r.hits]
            return _result(wrapped, cut_to("\n".join(lines) or "no results", SEARCH_BUDGET), budget=0)
        return _result(wrapped, cut_to(render_results(results), SEARCH_BUDGET))


async def ask(
    question: Annotated[str, Field(max_length=2000, description="the user's question, as asked")],
    ctx: Ctx,
    sources: AskSourcesArg = None,
    format: FormatArg = "quick",
    reading: ReadingArg = None,
    effort: EffortArg = "balanced",
) -> Annotated[CallToolResult, Answer]:
    """Answer a question from every source at once (private sources, and the web when the question
    needs it): sentences that each end with [n] citations, the sources behind them with their kind,
    tier or authority and date, and what each source found or why it failed. When the sources split
    into different readings the answer is a clarifying question listing them: ask again with
    reading. A tool error when every source failed, with each one's reason."""
    async with _tool_call(ctx) as service:
        answer = await service.ask(
            question, sources=sources, reading=reading, effort=effort, progress=_progress(ctx)
        )
        return _result(answer, cut_to(answer_text(answer, format), SEARCH_BUDGET), keep="sources")


async def retrieve(
    task: Annotated[str, Field(max_length=2000, description="the task, e.g. 'fix the token expiry bug'")],
    ctx: Ctx,
    sources: SourcesArg = None,
    max_cycles: Annotated[StrictInt, Field(ge=1, le=5, description="search-evaluate-refine cycles")] = 3,
) -> Annotated[CallToolResult, Retrieval]:
    """Find the files or passages a task needs when you do not know what to look for: searches,
    scores each candidate 0-1 with a reason and what is missing, learns the codebase's own words
    and searches again (at most max_cycles). Returns the candidates scoring 0.7 or more."""
    async with _tool_call(ctx) as service:
        found = await service.retrieve(task, sources=sources, max_cycles=max_cycles, progress=_progress(ctx))
        rows = (f"{c.relevance:.2f} {c.hit.location}: {c.reason}" for c in found.candidates)
        lines = [found.summary, *rows]
        return _result(found, cut_to("\n".join(lines), SEARCH_BUDGET), keep="candidates")


TOOLS = (web_search, web_fetch, route, search_sources, ask, retrieve)


class _Server(MCPServer[Service]):
    """The SDK's server, stricter about arguments: an argument a tool does not take is a tool
    error (the SDK would drop it silently), and a validation error reads like the HTTP API's
    ("tier: Input should be a valid integer"), without pydantic's links."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Service, Any] | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            _check_arguments(name, tool.parameters, tool.fn_metadata.validate_arguments, arguments)
        return await super().call_tool(name, arguments, context)


def _check_arguments(name: str, schema: dict[str, Any], validate: Any, arguments: dict[str, Any]) -> None:
    known = set(schema.get("properties", {}))
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise ToolError(
            f"Error executing tool {name}: InvalidRequest: unknown argument(s) "
            f"{', '.join(repr(u[:40]) for u in unknown[:5])}; {name} takes {', '.join(sorted(known))}"
        )
    try:
        validate(arguments)
    except ValidationError as exc:
        problems = describe_problems(exc.errors())
        raise ToolError(f"Error executing tool {name}: InvalidRequest: {problems}") from None


def build_server(settings: Settings | None = None, doors: DoorSettings | None = None) -> MCPServer[Service]:
    """The MCP server with every tool; the ``Service`` lives as long as the server runs."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Service]) -> AsyncIterator[Service]:
        # One session per worker process: its client, stores and open sources serve every call.
        async with Session(settings, lasting=True) as session:
            service = Service(session, doors)
            service.warm()
            yield service

    server = _Server(
        "sourcewise", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )
    for tool in TOOLS:
        # One paragraph: clients show the description as it is, indentation and all.
        summary = " ".join((tool.__doc__ or "").split())
        server.add_tool(tool, description=summary, annotations=READ_ONLY)
        registered = server._tool_manager.get_tool(tool.__name__)
        if registered is not None:  # clients learn that other arguments are refused
            registered.parameters["additionalProperties"] = False
    return server


def create_http_app(
    settings: Settings | None = None, doors: DoorSettings | None = None, *, host: str = "127.0.0.1"
) -> ASGIApp:
    """The Streamable HTTP app at ``/mcp``, stateless so that any worker can answer any call,
    behind the same key, rate limit and body limit as the HTTP API."""
    from sourcewise.doors.guards import guarded

    doors = doors or DoorSettings()
    settings = settings or load_settings()
    server = build_server(settings, doors)
    app = server.streamable_http_app(
        stateless_http=True,
        max_request_body_size=doors.max_body_bytes,
        host=host,
        transport_security=transport_security(doors.allowed_hosts),
    )
    return guarded(app, doors, open_paths=(), grants=access.grants(settings), jsonrpc=True)


LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def transport_security(allowed: Sequence[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection, on by default: the Host header must be loopback or one of
    ``allowed`` (``host`` for any port, or ``host:port``), a browser's Origin the same; ``*`` turns
    the check off (a proxy in front that checks instead)."""
    if "*" in allowed:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = list(LOOPBACK_HOSTS)
    for host in allowed:  # a bare name: any port, and none (a proxy on 80/443 sends the bare name)
        with_port = "]:" in host if host.startswith("[") else ":" in host
        hosts += [host] if with_port else [host, f"{host}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)
