"""Any MCP server's search tool as a provider (seed 000's "Gemini via an MCP agent", generalised).

Configure it under ``[providers.mcp]``: the server by ``command`` (started over stdio) or by ``url``
(Streamable HTTP), the ``tool`` and its ``arguments`` (argument name ->
value, where ``{query}`` and ``{max_results}`` are filled in). The call goes through the official
``mcp`` SDK client. The tool may answer with structured content or text: a JSON list of results
(or an object holding one under ``results``, ``items``, ``data``, ``web.results`` ..., and an
``answer`` beside it), text blocks of ``Title:`` / ``URL:`` / ``Description:`` lines as several
search servers write them, or a prose answer (an agent such as Gemini answering in words): its
markdown links, numbered source lists and ``Sources:`` block are the results and its text is the
answer (``web.prose``). The arguments are filled and the answer read by ``sources.mcp.read``,
the connection made by ``net.mcp``: the same code as ``mcp`` sources (``sources/mcp/source.py``). The
engine keeps the connection for its life (``net.mcp.Connections``): a stdio server starts on the
session's first search, not on every one.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shlex
import sys
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from sourcewise.errors import ParseError, ProviderError, ProviderNotConfigured, TransientError
from sourcewise.models import SNIPPET_MAX, RawResult
from sourcewise.net.mcp import Server, load_sdk, texts
from sourcewise.net.reasons import brief
from sourcewise.net.redirects import resolve_redirects
from sourcewise.sources.mcp.read import Records, ResultShape, fill_arguments, read_records
from sourcewise.web.providers.base import (
    Provider,
    ProviderCall,
    ProviderOutput,
    no_parse,
    no_request,
    options_config,
)

__all__ = ["PROVIDER", "McpOptions", "parse_tool_output"]

NAME = "mcp"


class McpOptions(BaseSettings):
    """``[providers.mcp]`` (or ``SOURCEWISE_MCP_*``): the server, its search tool and arguments."""

    model_config = options_config(NAME)

    command: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="MCP search server to start (stdio): command and arguments"
    )
    url: str | None = Field(default=None, description="MCP search server URL (Streamable HTTP)")
    tool: str = Field(default="search", min_length=1, description="the server's search tool")
    arguments: dict[str, str] = Field(
        default_factory=lambda: {"query": "{query}"},
        description="tool argument -> value; {query} and {max_results} are filled in",
    )

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return shlex.split(value)
            except ValueError as exc:
                raise ValueError(f"cannot split the command {value!r}: {exc}") from exc
        return value


def configured(options: McpOptions) -> tuple[bool, str]:
    if importlib.util.find_spec("mcp") is None:  # not imported here: that takes seconds (net.mcp.load_sdk)
        return False, "the mcp SDK is not installed: pip install 'sourcewise[mcp]'"
    if options.command:
        return True, f"starts `{options.command[0]}` (stdio), tool {options.tool!r}"
    if options.url:
        return True, f"server at its URL (Streamable HTTP), tool {options.tool!r}"
    return False, (
        "no server: set SOURCEWISE_MCP_COMMAND (stdio) or SOURCEWISE_MCP_URL (Streamable HTTP), "
        "or `command` / `url` and `tool` under [providers.mcp] in the config file"
    )


def _results(records: Records) -> ProviderOutput:
    """Web results from the records read: each needs a URL."""
    out: list[RawResult] = []
    for record in records.items:
        if not record["location"]:
            raise ParseError(NAME, "a result has no url, link or href")
        out.append(
            RawResult(
                title=record["title"],
                url=record["location"],
                snippet=record["snippet"] or record["text"][:SNIPPET_MAX],
                provider=NAME,
                position=len(out) + 1,
            )
        )
    return ProviderOutput(out, records.answer)


def parse_tool_output(structured: Any, texts: list[str]) -> ProviderOutput:
    """Results (and an answer, if the tool gave one) from a tool's structured content or its
    text content (``sources.mcp.read``); ``ParseError`` if none of it holds a result."""
    return _results(read_records(structured, texts, ResultShape(), NAME))


def _refused(exc: Exception) -> bool:
    """Whether the server answered with an error (the SDK's ``MCPError``), not a transport failure;
    the SDK is loaded once a call got as far as an answer."""
    sdk = sys.modules.get("mcp")
    return sdk is not None and isinstance(exc, sdk.MCPError)


async def run(call: ProviderCall) -> ProviderOutput:
    settings, options = call.settings, call.options
    if not isinstance(options, McpOptions):
        raise ProviderError(NAME, "called without its [providers.mcp] options (the engine passes them)")
    if not (options.command or options.url):
        raise ProviderNotConfigured(NAME, configured(options)[1])
    args = fill_arguments(options.arguments, {"query": call.query, "max_results": call.max_results})
    if call.connections is None:
        raise ProviderError(NAME, "called without the engine's MCP connections (the engine passes them)")
    server = call.connections.get(Server(command=tuple(options.command), url=options.url))
    try:
        async with asyncio.timeout(call.deadline):  # one server per session: started on the first call
            await load_sdk()  # in a thread: the deadline fires on time even during a cold import
            result = await server.call(options.tool, args, call.deadline)
    except TimeoutError as exc:
        raise TransientError(NAME, f"no answer within {call.deadline:g} s") from exc
    except Exception as exc:  # the SDK's transports raise many kinds, and groups of them
        if _refused(exc):
            raise ProviderError(NAME, f"the server refused the call: {brief(str(exc), 200)}") from exc
        raise TransientError(NAME, f"could not reach the MCP server ({type(exc).__name__})") from exc
    if result.is_error:
        said = brief(" ".join(texts(result)), 200) or "no message"
        raise ProviderError(NAME, f"the tool {options.tool!r} failed: {said}")
    out = parse_tool_output(result.structured_content, texts(result))
    # A Gemini agent cites grounding redirects: resolved within what is left of the call's budget
    links = await resolve_redirects(
        (r.url for r in out.results), settings,
        fetcher=call.fetcher, cache=call.redirects, clock=call.clock, seconds=call.left(),
    )  # fmt: skip
    results = [r.model_copy(update={"url": links.get(r.url, r.url)}) for r in out.results]
    return ProviderOutput(results[: call.max_results], out.answer)


PROVIDER = Provider(
    name=NAME,
    summary="a search tool on any MCP server (stdio command or Streamable HTTP URL)",
    configured=configured,
    build=no_request(NAME),
    parse=no_parse(NAME),
    max_per_request=50,
    run=run,
    options=McpOptions,
)
