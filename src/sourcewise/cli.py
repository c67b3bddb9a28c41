"""The ``sourcewise`` command: parse, call the public API, print. Exit codes:
0 success (including zero results, with a warning on stderr), 1 other errors,
2 bad input or config, 3 no provider could answer."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from . import api
from .config import Settings, load_settings
from .core.render import FORMATS, render
from .errors import ConfigError, InvalidInput, InvalidOption, NoProviderAvailable, SourcewiseError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Search the web and say how far each source can be trusted.",
)
log = logging.getLogger("sourcewise")

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Say more on stderr.")]


def _setup(verbose: bool, config: Path | None, **overrides: object) -> Settings:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    log.propagate = False
    try:
        return load_settings(config, **overrides)
    except ConfigError as exc:
        _fail(exc, 2)


def _fail(exc: Exception, code: int) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code)


def _guard(exc: SourcewiseError) -> NoReturn:
    if isinstance(exc, InvalidInput | ConfigError):
        _fail(exc, 2)
    if isinstance(exc, NoProviderAvailable):
        _fail(exc, 3)
    _fail(exc, 1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to search for (at least 3 characters).")],
    tier: Annotated[int | None, typer.Option("--tier", "-t", help="Only this tier (1-4).")] = None,
    max_results: Annotated[int | None, typer.Option("--max-results", "-n", help="1-50.")] = None,
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help="default, official, comprehensive or progressive.")
    ] = "default",
    fmt: Annotated[str, typer.Option("--format", "-f", help="quick, deep, progressive or json.")] = "quick",
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON for machines (same as --format json).")
    ] = False,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", "-p", help="Use these providers, in this order.")
    ] = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Search the web: results de-duplicated, rated by tier and ranked."""
    settings = _setup(verbose, config)
    fmt = "json" if as_json else fmt
    if fmt not in FORMATS:
        _fail(InvalidOption(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}"), 2)
    try:
        response = api.search(
            query,
            tier=tier,
            max_results=max_results,
            strategy=strategy,
            providers=provider or None,
            settings=settings,
        )
        typer.echo(render(response, fmt))
    except SourcewiseError as exc:
        _guard(exc)
    for name, why in response.attempts:
        log.info("%s was passed over: %s", name, why)


@app.command()
def providers(
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """List the web search providers: configured or not, suspended or not."""
    settings = _setup(verbose, config)
    rows = api.provider_status(settings)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
        return
    for row in rows:
        state = "ready" if row.configured else "not configured"
        if row.suspended_until:
            state = f"suspended until {row.suspended_until:%Y-%m-%d %H:%M:%S} UTC ({row.suspended_reason})"
        chain = "" if row.in_chain else " [not in chain]"
        typer.echo(f"{row.name:<11} {state}{chain} - {row.detail}")


@app.command()
def rate(
    url: Annotated[str, typer.Argument(help="The page to rate.")],
    query: Annotated[str | None, typer.Option("--query", "-q", help="What the user asked.")] = None,
    config: ConfigOpt = None,
) -> None:
    """Rate one URL: tier, reliability score and why."""
    settings = _setup(False, config)
    try:
        rating = api.rate_source(url, query, settings=settings)
    except SourcewiseError as exc:
        _guard(exc)
    typer.echo(json.dumps(rating.model_dump(), ensure_ascii=False))


def main() -> None:
    app()
