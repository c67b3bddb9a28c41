"""``sourcewise mcp`` and ``sourcewise serve``: the doors, started from the command line.

Workers are separate processes that read their settings again from the environment and the
config file (``--config`` is passed on as ``SOURCEWISE_CONFIG``); the API key is read from
``SOURCEWISE_API_KEY`` only, so that it never shows in a process list.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sourcewise.errors import ConfigError

if TYPE_CHECKING:
    from sourcewise.config import Settings
    from sourcewise.doors.service import DoorSettings

__all__ = ["add_door_commands", "door_url"]

HostOpt = Annotated[str, typer.Option("--host", help="Address to listen on (loopback unless you say so).")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=64, help="Worker processes.")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]


def _doors(host: str, settings: Settings) -> DoorSettings:
    from sourcewise.access import grants
    from sourcewise.doors.service import DoorSettings  # here: the server's modules load when a door is opened

    try:
        doors = DoorSettings()
    except ValueError as exc:
        raise ConfigError(f"Invalid SOURCEWISE_* server settings: {exc}") from exc
    loopback = host == "localhost" or _is_loopback(host)
    if not loopback and doors.api_key is None and not grants(settings):  # [access] keys guard it
        typer.echo(f"warning: listening on {host} without an API key (set SOURCEWISE_API_KEY)", err=True)
    return doors


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def door_url(host: str, port: int, path: str = "/") -> str:
    """The address a client uses: ``0.0.0.0`` and ``::`` listen everywhere, so this machine's
    loopback is named; an IPv6 address goes in brackets."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}{path}"


def _uvicorn(target: str, host: str, port: int, workers: int, config: Path | None, says: str) -> None:
    import uvicorn

    typer.echo(f"{says}; press Ctrl-C to stop", err=True)
    if config is not None:
        os.environ["SOURCEWISE_CONFIG"] = str(config.resolve())
    uvicorn.run(target, factory=True, host=host, port=port, workers=workers, log_level="warning")


def add_door_commands(app: typer.Typer, setup: Callable[..., Settings], fail: Callable[..., Any]) -> None:
    """Register ``mcp`` and ``serve`` on the CLI ``app``."""

    @app.command("mcp")
    def mcp_cmd(
        http: Annotated[bool, typer.Option("--http", help="Streamable HTTP at /mcp, not stdio.")] = False,
        host: HostOpt = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8765,
        workers: WorkersOpt = 1,
        allowed_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-host",
                metavar="HOST",
                help="With --http: a Host header to accept besides loopback (repeatable), e.g. the "
                "name behind your reverse proxy; * turns the DNS-rebinding check off.",
            ),
        ] = None,
        config: ConfigOpt = None,
    ) -> None:
        """Serve the tools to MCP clients: ask, search_sources, retrieve, route, web_search,
        web_fetch (stdio unless --http; over HTTP it prints its URL).

        Examples: claude mcp add sourcewise -- sourcewise mcp;
        sourcewise mcp --http --port 8765 --allowed-host search.example.org
        """
        settings = setup(False, config)
        if allowed_host:  # the workers read it from the environment, as every door setting
            os.environ["SOURCEWISE_ALLOWED_HOSTS"] = ",".join(allowed_host)
        try:
            _doors(host, settings)
        except ConfigError as exc:
            fail(exc, 2)
        if http:
            says = f"MCP over Streamable HTTP at {door_url(host, port, '/mcp')}"
            _uvicorn("sourcewise.doors.mcp:create_http_app", host, port, workers, config, says)
            return
        from sourcewise.doors.mcp import build_server

        build_server(settings).run("stdio")

    _add_serve(app, setup, fail)


def _add_serve(app: typer.Typer, setup: Callable[..., Settings], fail: Callable[..., Any]) -> None:
    @app.command("serve")
    def serve_cmd(
        host: HostOpt = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8080,
        workers: WorkersOpt = 1,
        config: ConfigOpt = None,
    ) -> None:
        """Serve the web page (/) and the HTTP API: /ask, /sources/search, /retrieve, /route,
        /web/search, /web/fetch, /health (its documentation at /docs, /redoc and /openapi.json).

        Example: sourcewise serve --port 8080, then open http://127.0.0.1:8080/
        """
        settings = setup(False, config)
        try:
            _doors(host, settings)
        except ConfigError as exc:
            fail(exc, 2)
        url = door_url(host, port)
        says = f"sourcewise at {url} (the web page; the API's documentation at {url}docs)"
        _uvicorn("sourcewise.doors.http:create_app", host, port, workers, config, says)
