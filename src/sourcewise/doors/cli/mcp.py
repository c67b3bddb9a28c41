"""``sourcewise sources add-mcp NAME -- COMMAND...`` (or ``--url URL``): connect to an MCP server,
list its tools with their input schemas, propose a mapping for a search-like tool and, once the
user confirms (``--yes`` for scripts), add ``[sources.NAME]`` to the config file."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sourcewise.doors.cli.common import VerboseOpt
from sourcewise.doors.cli.common import echo as _echo
from sourcewise.doors.cli.common import fail as _fail
from sourcewise.doors.cli.common import reported as _reported
from sourcewise.doors.cli.common import setup as _setup
from sourcewise.doors.cli.sources import sources_app
from sourcewise.errors import ConfigError, SourceUnavailable

if TYPE_CHECKING:
    from sourcewise.config import Settings
    from sourcewise.sources.mcp.read import ArgValue

__all__ = ["Proposal", "propose", "section_toml"]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
SEARCHY = ("search", "query", "find", "lookup", "list")
# what a tool's argument name says it wants: placeholder <- names, best first
ROLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("{query}", ("query", "q", "search_query", "search", "text", "keywords", "terms", "question")),
    (
        "{limit}",
        ("limit", "count", "max_results", "perpage", "per_page", "page_size", "top_k", "k", "n", "size"),
    ),
    ("{after}", ("after", "since", "from_date", "start_date", "date_after", "filter_date_after")),
    ("{before}", ("before", "until", "to_date", "end_date", "date_before", "filter_date_before")),
    ("{in}", ("in", "channel", "in_channel", "filter_in_channel", "channel_id")),
    ("{from}", ("from", "author", "user", "from_user", "filter_users_from", "sender")),
)
KINDS = (("chat", ("slack", "chat", "message", "channel", "teams")), ("email", ("mail", "gmail", "inbox")),
         ("project_tracker", ("issue", "jira", "ticket", "task", "linear", "github")),
         ("cloud_storage", ("drive", "file", "dropbox", "box")))  # fmt: skip


@dataclass
class Proposal:
    """A tool and the arguments to send it; ``missing``: required arguments left to the user."""

    tool: str
    arguments: dict[str, ArgValue] = field(default_factory=dict)
    kind: str = "knowledge_base"
    missing: list[str] = field(default_factory=list)


def _props(tool: Any) -> tuple[dict[str, Any], list[str]]:
    schema = getattr(tool, "input_schema", None) or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    return (props if isinstance(props, dict) else {}), [r for r in required or [] if isinstance(r, str)]


def _score(tool: Any) -> tuple[int, int]:
    """How search-like a tool is: its name, then whether it takes a query-like string."""
    name = str(getattr(tool, "name", "")).lower()
    named = next((len(SEARCHY) - i for i, word in enumerate(SEARCHY) if word in name), 0)
    props, _ = _props(tool)
    takes = any(k.lower() in ROLES[0][1] for k in props)
    return named, int(takes)


def propose(tools: list[Any], tool: str | None, server_words: str) -> Proposal:
    """The tool to use (``tool``, or the most search-like one) and its arguments."""
    if tool is not None:
        chosen = next((t for t in tools if t.name == tool), None)
        if chosen is None:
            raise ConfigError(
                f"the server has no tool {tool!r}; its tools: {', '.join(t.name for t in tools)}"
            )
    else:
        ranked = sorted(tools, key=_score, reverse=True)
        if not ranked or _score(ranked[0]) == (0, 0):
            raise ConfigError("no search-like tool on this server: name one with --tool")
        chosen = ranked[0]
    props, required = _props(chosen)
    arguments: dict[str, ArgValue] = {}
    for placeholder, names in ROLES:
        match = next((k for n in names for k in props if k.lower() == n and k not in arguments), None)
        if match is not None:
            arguments[match] = placeholder
    words = f"{server_words} {chosen.name} {getattr(chosen, 'description', '') or ''}".lower()
    kind = next((k for k, hints in KINDS if any(h in words for h in hints)), "knowledge_base")
    return Proposal(chosen.name, arguments, kind, [r for r in required if r not in arguments])


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)  # strings, numbers and booleans: TOML reads them alike


def section_toml(name: str, section: dict[str, Any]) -> str:
    """``[sources.NAME]`` with ``section``'s keys, as TOML."""
    lines = [f"[sources.{name}]"] + [
        f"{k} = {_toml_value(v)}" for k, v in section.items() if v not in (None, {}, [])
    ]
    return "\n".join(lines) + "\n"


async def _tools(section: dict[str, Any], settings: Settings) -> list[Any]:
    from sourcewise.net.mcp import Connection, Server, describe

    server = Server(tuple(section.get("command", ())), section.get("url"), section.get("env", {}),
                    section.get("headers", {}), "mcp-add")  # fmt: skip
    connection = Connection(server, settings, restarts=0)
    try:
        await connection.client(settings.source_timeout)
        return list(connection.tools)
    except (ConfigError, TimeoutError) as exc:
        raise ConfigError(f"could not list the server's tools: {exc or 'no answer in time'}") from exc
    except Exception as exc:
        raise SourceUnavailable(server.describe()[:80], f"could not connect: {describe(exc)}") from exc
    finally:
        await connection.aclose()


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{what} takes KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _check(name: str, section: dict[str, Any]) -> None:
    """``ConfigError`` when the section is not a valid mcp source."""
    from pydantic import ValidationError

    from sourcewise.sources.mcp.source import McpSourceOptions

    try:
        McpSourceOptions(**{k: v for k, v in section.items() if k != "type"})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"[sources.{name}]: {problems}") from exc


def _show(tools: list[Any]) -> None:
    from sourcewise.sources.mcp.schema import describe_schema

    _echo(f"{len(tools)} tool(s):")
    for t in tools:
        about = " ".join(str(getattr(t, "description", "") or "").split())[:120]
        _echo(f"  {t.name}: {about}\n      {describe_schema(getattr(t, 'input_schema', None) or {})}")


@sources_app.command("add-mcp")
def add_mcp(
    name: Annotated[str, typer.Argument(help="The source's name, as in [sources.NAME].")],
    command: Annotated[list[str] | None, typer.Argument(help="After --: the server's command.")] = None,
    url: Annotated[str | None, typer.Option("--url", help="A Streamable HTTP server instead.")] = None,
    tool: Annotated[
        str | None, typer.Option("--tool", help="The search tool (default: the most search-like).")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="chat, email, knowledge_base ... (default: guessed).")
    ] = None,
    arg: Annotated[
        list[str] | None, typer.Option("--arg", help="NAME=VALUE: an argument to send (repeatable).")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option("--env", help="NAME=VALUE for a stdio server; ${VAR} read.")
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", help="NAME=VALUE for an HTTP server.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Write without asking (scripts).")] = False,
    config: Annotated[Path | None, typer.Option("--config", help="The TOML config file to write.")] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Connect to an MCP server, list its tools, propose a search mapping and add it to the config."""
    from sourcewise.config import config_path

    if config is not None and not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.touch()
    settings = _setup(verbose, config)
    path = config or config_path()
    with _reported():
        if not NAME.match(name):
            raise ConfigError(f"a source name is letters, digits, - and _ (40 at most), got {name[:60]!r}")
        if name in settings.sources:
            raise ConfigError(f"[sources.{name}] is already in {path}")
        if bool(command) == bool(url):
            raise ConfigError("give the server as -- COMMAND ARGS... or as --url URL (one of them)")
        section: dict[str, Any] = {
            "type": "mcp",
            "command": list(command or []),
            "url": url,
            "env": _pairs(env, "--env"),
            "headers": _pairs(header, "--header"),
        }
        tools = asyncio.run(_tools(section, settings))
        _show(tools)
        chosen = propose(tools, tool, " ".join(command or [url or ""]))
        arguments = {**chosen.arguments, **_pairs(arg, "--arg")}
        missing = [m for m in chosen.missing if m not in arguments]
        if missing:
            raise ConfigError(f"{chosen.tool} requires {', '.join(missing)}: give each with --arg NAME=VALUE")
        section.update(tool=chosen.tool, kind=kind or chosen.kind, arguments=arguments)
        _check(name, section)
        text = section_toml(name, section)
    _echo(f"\nproposed for {path}:\n\n{text}")
    if not yes and not typer.confirm("write it?", default=True):
        _fail(ConfigError("nothing written"), 1)
    _append_section(path, text, verbose)
    _echo(f"added [sources.{name}] to {path}; `sourcewise sources` shows its state")


def _append_section(path: Path, text: str, verbose: bool) -> None:
    """Add ``text`` to the config file at ``path``; put the file back as it was if it no longer reads."""
    before = path.read_text("utf-8") if path.exists() else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(before + ("\n" if before and not before.endswith("\n\n") else "") + text, "utf-8")
    try:
        _setup(verbose, path)  # the file still reads, with the new source in it
    except typer.Exit:
        path.write_text(before, "utf-8")
        raise
