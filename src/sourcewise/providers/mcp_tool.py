"""Any MCP server's search tool as a provider (seed 000's "Gemini via an MCP agent", generalised).

Configure it under ``[providers.mcp]``: the server by ``command`` (started over stdio) or by ``url``
(Streamable HTTP), the ``tool`` and its ``arguments`` (argument name ->
value, where ``{query}`` and ``{max_results}`` are filled in). The call goes through the official
``mcp`` SDK client. The tool may answer with structured content or text: a JSON list of results
(or an object holding one under ``results``, ``items``, ``data``, ``web.results`` ..., and an
``answer`` beside it), text blocks of ``Title:`` / ``URL:`` / ``Description:`` lines as several
search servers write them, or a prose answer (an agent such as Gemini answering in words): its
markdown links, numbered source lists and ``Sources:`` block are the results and its text is the
answer (``providers.prose``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
from collections.abc import Mapping
from typing import Annotated, Any, TextIO

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from ..config import Settings
from ..errors import ParseError, ProviderError, ProviderNotConfigured, TransientError
from ..models import RawResult
from ..net.redirects import resolve_redirects
from .base import Provider, ProviderCall, ProviderOutput, no_parse, no_request, options_config
from .prose import read_prose

__all__ = ["PROVIDER", "McpOptions", "arguments", "parse_tool_output"]

NAME = "mcp"
MAX_TEXT = 2_000_000
log = logging.getLogger("sourcewise")
_LIST_KEYS = ("results", "items", "data", "organic_results", "organic", "result", "hits", "documents")
_URL_KEYS = ("url", "link", "href", "uri")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "description", "content", "body", "text", "summary")
_LABELS = {"title": "title", "url": "url", "link": "url", "description": "snippet", "snippet": "snippet"}


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
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False, "the mcp SDK is not installed: pip install 'sourcewise[mcp]'"
    if options.command:
        return True, f"starts `{options.command[0]}` (stdio), tool {options.tool!r}"
    if options.url:
        return True, f"server at its URL (Streamable HTTP), tool {options.tool!r}"
    return False, (
        "no server: set SOURCEWISE_MCP_COMMAND (stdio) or SOURCEWISE_MCP_URL (Streamable HTTP), "
        "or `command` / `url` and `tool` under [providers.mcp] in the config file"
    )


def arguments(query: str, max_results: int, mapping: Mapping[str, str]) -> dict[str, Any]:
    """The tool's arguments: ``{max_results}`` alone gives a number; ``{query}`` is substituted."""
    out: dict[str, Any] = {}
    for name, template in mapping.items():
        if template.strip() == "{max_results}":
            out[name] = max_results
        else:
            out[name] = template.replace("{query}", query).replace("{max_results}", str(max_results))
    return out


def _first(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _items(value: Any) -> list[Any] | None:
    """The list of results inside a tool's answer, looking one or two levels deep."""
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        return None
    for key in (*_LIST_KEYS, "web"):
        inner = value.get(key)
        if isinstance(inner, list):
            return inner
        if isinstance(inner, dict) and isinstance(inner.get("results"), list):
            return list(inner["results"])
    return None


def _from_items(items: list[Any]) -> list[RawResult]:
    out: list[RawResult] = []
    for item in items:
        if not isinstance(item, dict):
            raise ParseError(NAME, "a result is not an object")
        url = _first(item, _URL_KEYS)
        if not url:
            raise ParseError(NAME, "a result has no url, link or href")
        out.append(
            RawResult(
                title=_first(item, _TITLE_KEYS),
                url=url,
                snippet=_first(item, _SNIPPET_KEYS),
                provider=NAME,
                position=len(out) + 1,
            )
        )
    return out


def _from_labelled_text(text: str) -> list[RawResult]:
    """``Title: ...`` / ``URL: ...`` / ``Description: ...`` blocks, one field per line."""
    records: list[dict[str, str]] = []
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        field = _LABELS.get(label.strip().lower()) if sep else None
        if field is None:
            continue
        if not records or field in records[-1]:
            records.append({})
        records[-1][field] = value.strip()
    return _from_items([r for r in records if r.get("url")]) if any(r.get("url") for r in records) else []


def _answer_beside(value: Any) -> str | None:
    """An ``answer`` (or ``summary``) string beside the results of a JSON object, if any."""
    if isinstance(value, dict):
        for key in ("answer", "summary"):
            said = value.get(key)
            if isinstance(said, str) and said.strip():
                return said.strip()
    return None


def parse_tool_output(structured: Any, texts: list[str]) -> ProviderOutput:
    """Results (and an answer, if the tool gave one) from a tool's structured content or its
    text content; ``ParseError`` if none of it holds a result."""
    if structured is not None and (items := _items(structured)) is not None:
        return ProviderOutput(_from_items(items), _answer_beside(structured))
    prose: list[str] = []
    for text in texts:
        if len(text) > MAX_TEXT:
            raise ParseError(NAME, f"the tool's answer is longer than {MAX_TEXT} characters")
        try:
            value = json.loads(text)
        except ValueError:
            found = _from_labelled_text(text)
            if found:
                return ProviderOutput(found)
            prose.append(text)
            continue
        if (items := _items(value)) is not None:
            return ProviderOutput(_from_items(items), _answer_beside(value))
    read = read_prose("\n\n".join(prose), NAME)
    if read.results:
        return ProviderOutput(read.results, read.answer or None)
    raise ParseError(NAME, "the tool's answer holds no list of results and no links to sources")


_warned: set[str] = set()


def _server_log(settings: Settings) -> TextIO:
    """Where a stdio server's stderr goes: a file beside the caches, never the user's terminal.
    When the state dir cannot be used, nowhere (the null device), with one warning per path."""
    path = settings.state_dir / "mcp-server.log"
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        if str(path) not in _warned:
            _warned.add(str(path))
            why = exc.strerror or type(exc).__name__
            log.warning("MCP server log %s cannot be written (%s); its messages are dropped", path, why)
        return open(os.devnull, "w", encoding="utf-8")  # closed by the caller's with


async def _call(options: McpOptions, settings: Settings, args: dict[str, Any], seconds: float) -> Any:
    from mcp import Client, StdioServerParameters  # here: the SDK is only needed when used
    from mcp.client.stdio import stdio_client

    if not options.command:
        # The one HTTP client not lent by the session, justified: the MCP SDK speaks through
        # httpx2 (another library, whose client the session's httpx client cannot stand in for)
        # and opens its client per connection; the connection, and so the client, lives for
        # this call only and is closed with it.
        async with (
            asyncio.timeout(seconds),
            Client(str(options.url), read_timeout_seconds=seconds) as client,
        ):
            return await client.call_tool(options.tool, args)
    command, *rest = options.command
    with _server_log(settings) as errlog:
        transport = stdio_client(StdioServerParameters(command=command, args=rest), errlog=errlog)
        async with asyncio.timeout(seconds), Client(transport, read_timeout_seconds=seconds) as client:
            return await client.call_tool(options.tool, args)


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", "") == "text"]


async def run(call: ProviderCall) -> ProviderOutput:
    settings, options = call.settings, call.options
    if not isinstance(options, McpOptions):
        raise ProviderError(NAME, "called without its [providers.mcp] options (the engine passes them)")
    if not (options.command or options.url):
        raise ProviderNotConfigured(NAME, configured(options)[1])
    from mcp import MCPError

    args = arguments(call.query, call.max_results, options.arguments)
    started = call.clock()
    try:
        result = await _call(options, settings, args, call.deadline)
    except TimeoutError as exc:
        raise TransientError(NAME, f"no answer within {call.deadline:g} s") from exc
    except MCPError as exc:
        raise ProviderError(NAME, f"the server refused the call: {str(exc)[:200]}") from exc
    except Exception as exc:  # the SDK's transports raise many kinds, and groups of them
        raise TransientError(NAME, f"could not reach the MCP server ({type(exc).__name__})") from exc
    if result.is_error:
        said = " ".join(_texts(result))[:200] or "no message"
        raise ProviderError(NAME, f"the tool {options.tool!r} failed: {said}")
    out = parse_tool_output(result.structured_content, _texts(result))
    # A Gemini agent cites grounding redirects: resolved within what is left of the call's budget
    left = call.deadline - (call.clock() - started) - max(0.25, 0.1 * call.deadline)
    links = await resolve_redirects(
        (r.url for r in out.results), settings,
        fetcher=call.fetcher, cache=call.redirects, clock=call.clock, seconds=left,
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
