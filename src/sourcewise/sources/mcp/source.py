"""Any MCP server's search tool as a source: a team's live Slack, tracker, wiki or mail in ``ask``.

```toml
[sources.team-chat]
type = "mcp"
preset = "slack"            # optional: data from data/mcp_presets.toml, overridden key by key
command = ["npx", "-y", "slack-mcp-server@latest", "--transport", "stdio"]   # or url = "https://..."
env = { SLACK_MCP_XOXP_TOKEN = "${SLACK_MCP_XOXP_TOKEN}" }                  # headers = {...} for url
tool = "conversations_search_messages"
kind = "chat"               # chat, email, knowledge_base, project_tracker, cloud_storage, or a plug-in's
arguments = { search_query = "{query}", limit = "{limit}" }
results = { format = "csv", text = "Text", author = "RealName" }
```

The source renders a plan in its kind's syntax (the renderer of the built-in source of that kind:
Slack's for ``chat``, Gmail's for ``email`` ...; ``syntax`` names another), fills the
``arguments`` (``sources.mcp.read``), calls the tool over one connection kept for the session's life
(``net.mcp``; a crashed server is started again once) and reads the answer into hits. The tool's
input schema is checked against ``arguments`` when it connects: a mismatch is a ``ConfigError``.
An MCP source exists only as a configured name: a spec such as ``mcp:x`` is refused, so a remote
caller of a door cannot start a command. See docs/mcp-sources.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shlex
import tomllib
from datetime import datetime
from functools import cache, lru_cache
from importlib import resources
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

from pydantic import Field, field_validator, model_validator

from sourcewise.config import Settings
from sourcewise.errors import ConfigError, SourceError, SourceUnavailable
from sourcewise.models import KIND_PATTERN, Hit, Plan, SourceInfo, SourceQuery, SourceResult
from sourcewise.net.mcp import Connection, Server, describe, expand, texts
from sourcewise.planning import syntax as _syntax
from sourcewise.sources.base import Capabilities, Source, SourceOptions
from sourcewise.sources.filters import FILTER_KEYS, parse_query
from sourcewise.sources.mcp.read import (
    FILTERS,
    ArgValue,
    ResultShape,
    fill_arguments,
    placeholders,
    read_records,
)
from sourcewise.sources.mcp.schema import check_arguments
from sourcewise.web.rank import cut_snippet

__all__ = ["McpSource", "McpSourceOptions", "presets"]

MAX_HITS = 200
QUERY_ONLY: dict[str, ArgValue] = {"query": "{query}"}
KIND_AUTHORITY = {"chat": "chat", "email": "email", "project_tracker": "tracker_task",
                  "knowledge_base": "wiki", "cloud_storage": "shared_doc"}  # fmt: skip
_KIND = re.compile(KIND_PATTERN)


@cache
def presets() -> dict[str, dict[str, Any]]:
    """The presets shipped in ``data/mcp_presets.toml``, by name."""
    text = resources.files("sourcewise").joinpath("data/mcp_presets.toml").read_text("utf-8")
    return tomllib.loads(text)


class McpSourceOptions(SourceOptions):
    """``[sources.NAME]`` with ``type = "mcp"``."""

    preset: str | None = Field(default=None, description="a preset of data/mcp_presets.toml to start from")
    summary: str = Field(default="", description="what the server is (a preset says it)")
    command: list[str] = Field(default_factory=list, description="the server to start over stdio")
    url: str | None = Field(default=None, description="the server's Streamable HTTP URL")
    env: dict[str, str] = Field(
        default_factory=dict, description="environment of a stdio server; ${VAR} read"
    )
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers; ${VAR} read")
    tool: str = Field(default="search", min_length=1, max_length=200, description="the server's search tool")
    kind: str = Field(default="knowledge_base", pattern=KIND_PATTERN)
    syntax: str | None = Field(default=None, description="plain or a kind whose syntax to write")
    authority: str | None = Field(default=None, pattern=KIND_PATTERN)
    arguments: dict[str, ArgValue] = Field(default_factory=lambda: dict(QUERY_ONLY))
    results: ResultShape = Field(default_factory=ResultShape)
    timeout: float | None = Field(default=None, gt=0, le=300, description="seconds per call")

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("preset") is None:
            return data
        name = data["preset"]
        known = presets()
        if name not in known:
            raise ValueError(f"no preset {name!r}; presets: {', '.join(sorted(known))}")
        preset = dict(known[name])
        if "command" in data or "url" in data:  # the source's own server replaces the preset's
            preset.pop("command", None)
            preset.pop("url", None)
        return {**preset, **data}

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _server(self) -> McpSourceOptions:
        if self.path is not None or bool(self.command) == bool(self.url):
            raise ValueError(
                "an mcp source is configured by name, in [sources.NAME], with either `command` "
                "(a stdio server) or `url` (Streamable HTTP)"
            )
        if self.url is not None and urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError(f"url must be http(s)://..., got {self.url[:80]!r}")
        return self


@lru_cache(maxsize=64)
def _kind_class(
    kind: str, syntax: _syntax.Syntax, authority: str, filters: frozenset[str]
) -> type[McpSource]:
    """The class of the MCP sources of one kind: its syntax, authority and filters as class data,
    as for every other source (``Source.render`` reads them from the class)."""
    attrs = {"kind": kind, "authority": authority, "syntax": staticmethod(syntax), "filters": filters,
             "__module__": __name__}  # fmt: skip
    return type(f"McpSource[{kind}]", (McpSource,), attrs)


def _for_kind(options: McpSourceOptions, settings: Settings) -> type[McpSource]:
    from sourcewise.registry import source_kinds

    kinds = source_kinds(settings)
    named = options.syntax or options.kind
    builtin = kinds.get(named) if named not in ("plain", "mcp") else None
    if options.syntax and options.syntax != "plain" and builtin is None:
        raise ConfigError(f"syntax {options.syntax!r}: not plain nor a kind ({', '.join(sorted(kinds))})")
    syntax = builtin.syntax if builtin is not None else _syntax.plain
    kind_cls = kinds.get(options.kind)
    authority = (
        options.authority
        or KIND_AUTHORITY.get(options.kind)
        or (kind_cls.authority if kind_cls is not None else "shared_doc")
    )
    return _kind_class(options.kind, syntax, authority, FILTER_KEYS)


class McpSource(Source):
    """A search tool of an MCP server (stdio or Streamable HTTP), kept connected for the session."""

    type = "mcp"
    kind = "knowledge_base"  # each configured source gets the class of its own kind (``__new__``)
    authority = "wiki"
    filters: ClassVar[frozenset[str]] = FILTER_KEYS  # the server reads them: none is refused here
    Options = McpSourceOptions
    capabilities = Capabilities()

    def __new__(cls, name: str, options: SourceOptions, settings: Settings) -> McpSource:
        if cls is McpSource and isinstance(options, McpSourceOptions):
            cls = _for_kind(options, settings)
        return super().__new__(cls)

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        super().__init__(name, options, settings)
        opts = self.opts
        log_name = "mcp-" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
        server = Server(tuple(opts.command), opts.url, opts.env, opts.headers, log_name)
        self.connection = Connection(server, settings)
        self._checked = False

    @property
    def opts(self) -> McpSourceOptions:
        assert isinstance(self.options, McpSourceOptions)
        return self.options

    @property
    def seconds(self) -> float:
        return self.opts.timeout or self.settings.source_timeout

    # -- queries ---------------------------------------------------------------------------------
    def _separate(self) -> set[str]:
        """The filters the tool takes as arguments of their own (``{after}`` ...)."""
        return placeholders(self.opts.arguments) & FILTERS

    def query_for(self, plan: Plan) -> list[SourceQuery]:
        """The plan in the kind's syntax; filters the tool takes as separate arguments go there
        (as the plan's first and last day wanted, authors and channels) instead of the query."""
        separate = self._separate()
        if not separate:
            return self.render(plan)
        c = plan.constraints
        said = {
            "after": c.after.isoformat() if c.after else "",
            "before": c.before.isoformat() if c.before else "",
            "from": ",".join(c.authors),
            "in": ",".join(ch.lstrip("#") for ch in c.channels),
        }
        params = {f"mcp_{k}": v for k, v in said.items() if k in separate and v}
        cleared: dict[str, Any] = {}
        for key, field in (("after", "after"), ("before", "before"), ("from", "authors"), ("in", "channels")):
            if key in separate:
                cleared[field] = None if key in ("after", "before") else []
        bare = plan.model_copy(update={"constraints": c.model_copy(update=cleared)})
        return [q.model_copy(update={"params": {**q.params, **params}}) for q in self.render(bare)]

    def _values(self, query: SourceQuery, limit: int) -> dict[str, str | int]:
        """What fills the arguments: the query (without the filters sent apart) and the filters."""
        separate = self._separate()
        text = query.query
        values: dict[str, str | int] = {"limit": limit}
        if separate:
            parsed = parse_query(query.query)
            for key in separate:
                given = query.params.get(f"mcp_{key}")
                typed = [v.lstrip("#") for v in parsed.values(key)]
                values[key] = given if isinstance(given, str) and given else ",".join(typed)
                for value in parsed.values(key):
                    text = text.replace(f"{key}:{value}", " ")
            text = " ".join(text.split())
        values["query"] = text
        values["query_sql"] = text.replace("'", "''")
        return values

    # -- the call ----------------------------------------------------------------------------------
    async def _check(self) -> None:
        """Connect, and check the configured arguments against the tool's input schema (once)."""
        try:
            await self.connection.client(self.seconds)
        except (ConfigError, TimeoutError):
            raise
        except OSError as exc:
            raise SourceUnavailable(self.name, f"cannot start the MCP server: {describe(exc)}") from exc
        except Exception as exc:
            raise SourceUnavailable(self.name, f"could not reach the MCP server: {describe(exc)}") from exc
        if not self._checked:
            check_arguments(self.name, self.opts.tool, self.opts.arguments, self.connection.tools)
            self._checked = True

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        from mcp import MCPError

        want = max(1, min(limit or self.options.limit, MAX_HITS))
        args = fill_arguments(self.opts.arguments, self._values(query, want))
        async with asyncio.timeout(self.seconds):
            await self._check()
            try:
                result = await self.connection.call(self.opts.tool, args, self.seconds)
            except MCPError as exc:
                raise SourceError(self.name, f"the server refused the call: {str(exc)[:200]}") from exc
            except (TimeoutError, asyncio.CancelledError):
                raise
            except Exception as exc:
                raise SourceUnavailable(self.name, f"the MCP server failed: {describe(exc)}") from exc
        said = texts(result)
        if result.is_error:
            why = " ".join(said)[:200] or "no message"
            raise SourceError(self.name, f"the tool {self.opts.tool!r} failed: {why}")
        records = read_records(result.structured_content, said, self._shape(), self.name)
        hits: dict[str, Hit] = {}
        for record in records.items:
            hit = self._hit(record, len(hits))
            hits.setdefault(hit.location, hit)
            if len(hits) >= want:
                break
        return self.result(query, list(hits.values()), [])

    def _shape(self) -> ResultShape:
        """The results shape, with ``${VAR}`` in its templates read from the environment."""
        shape = self.opts.results
        update = {
            k: expand(v, f"source {self.name!r} results.{k}")
            for k, v in shape.model_dump(exclude={"extra", "format"}).items()
            if isinstance(v, str)
        }
        return shape.model_copy(update=update)

    def _hit(self, r: dict[str, str], position: int) -> Hit:
        location = r["location"] or self._made_location(r)
        text = r["text"] or r["snippet"]
        tier = int(r["tier"]) if r.get("tier") in ("1", "2", "3", "4") else None
        score = r.get("reliability_score", "")
        meta = {k: v for k, v in r.items() if k not in Hit.model_fields and k != "id" and v}
        meta.update(server=self.connection.server.describe()[:200], tool=self.opts.tool)
        return Hit(
            title=r["title"] or text[:80] or location,
            location=location,
            snippet=r["snippet"] or cut_snippet(text),
            text=text,
            source=self.name,
            kind=r["kind"] if _KIND.match(r.get("kind", "")) else self.kind,
            authority=r["authority"] if _KIND.match(r.get("authority", "")) else self.authority,
            score=1.0 / (1 + position),
            author=r["author"] or None,
            timestamp=datetime.fromisoformat(r["timestamp"]) if r["timestamp"] else None,
            path=r.get("path") or None,
            tier=tier,  # type: ignore[arg-type]
            reliability_score=int(score) if score.isdigit() and int(score) <= 100 else None,
            meta=meta,
        )

    def _made_location(self, r: dict[str, str]) -> str:
        """A location for an item without one: its id, or a digest of what it says."""
        key = r["id"] or hashlib.sha256((r["title"] + "\n" + r["text"]).encode()).hexdigest()[:16]
        return f"mcp://{quote(self.name, safe='')}/{quote(key, safe='')}"

    # -- life ------------------------------------------------------------------------------------
    async def info(self) -> SourceInfo:
        """The server, the tool and the state: connected, or failed and why."""
        base = SourceInfo(
            name=self.name,
            type=self.type,
            kind=self.kind,
            location=self.connection.server.describe(),
            ready=False,
        )
        try:
            async with asyncio.timeout(self.seconds):
                await self._check()
        except TimeoutError:
            self.connection.state = f"failed: no answer within {self.seconds:g} s"
        except SourceError as exc:
            self.connection.state = f"failed: {exc.detail}"
        except ConfigError as exc:
            self.connection.state = f"failed: {exc}"
        ready = self.connection.state == "connected"
        return base.model_copy(
            update={"ready": ready, "detail": f"tool {self.opts.tool}; {self.connection.state}"}
        )

    async def aclose(self) -> None:
        await self.connection.aclose()
