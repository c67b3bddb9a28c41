"""The web commands: ``search``, ``providers``, ``rate``, ``route``, ``plan``, ``context``, ``fetch``."""

from __future__ import annotations

import logging
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sourcewise._lazy import lazy_module
from sourcewise.doors.cli.common import (
    ConfigOpt,
    OutputOpt,
    VerboseOpt,
    echo,
    echo_json,
    fail,
    new_app,
    output_format,
    reported,
    setup,
    written_to,
)
from sourcewise.doors.formats import FORMATS
from sourcewise.errors import InvalidOption, RobotsDisallowed

if TYPE_CHECKING:
    from sourcewise.doors import present
    from sourcewise.models import SearchResponse
    from sourcewise.planning import routing, widen
    from sourcewise.web import api, pages
else:  # imported when a command first needs them: ``--help`` starts without them
    api = lazy_module("sourcewise.web.api")
    pages = lazy_module("sourcewise.web.pages")
    present = lazy_module("sourcewise.doors.present")
    routing = lazy_module("sourcewise.planning.routing")
    widen = lazy_module("sourcewise.planning.widen")

__all__ = ["app"]

app = new_app()
log = logging.getLogger("sourcewise")


class Strategy(StrEnum):
    default = "default"
    official = "official"
    comprehensive = "comprehensive"
    progressive = "progressive"


Format = StrEnum("Format", {name: name for name in FORMATS})  # type: ignore[misc]  # typer's choices
_QUICK = Format("quick")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to search for (3+ characters on the web).")],
    tier: Annotated[int | None, typer.Option("--tier", "-t", help="Only this tier (1-4).")] = None,
    max_results: Annotated[int | None, typer.Option("--max-results", "-n", help="1-50.")] = None,
    strategy: Annotated[
        Strategy, typer.Option("--strategy", "-s", help="Which results, in which order.")
    ] = Strategy.default,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="How to print them.")] = _QUICK,
    as_json: Annotated[
        bool, typer.Option("--json", help="The whole response as JSON (same as --format json).")
    ] = False,
    as_jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON result per line.")] = False,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", "-p", help="Use these providers, in this order.")
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            "-S",
            help="Search these sources instead of the web (repeatable; the same as `search-sources`): "
            "a configured name, kb, web, code:PATH, slack:PATH, mail:PATH, github:PATH. The query may "
            "use their filters.",
        ),
    ] = None,
    output: OutputOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Search the web (or, with --source, private sources): de-duplicated, rated and ranked.

    Examples: sourcewise search "React Server Components" --tier 1;
    sourcewise search "rate limit" -S kb --jsonl -o hits.jsonl
    """
    settings = setup(verbose, config)
    shape = output_format("search", output, fmt.value, as_json, as_jsonl)
    if source:
        web_only = {"--tier": tier is not None, "--strategy": strategy is not Strategy.default,
                    "--provider": bool(provider)}  # fmt: skip
        if given := [flag for flag, used in web_only.items() if used]:
            fail(InvalidOption(f"{', '.join(given)} applies to web search only, not with --source"), 2)
        from sourcewise.doors.cli.sources import search_sources_cmd

        with written_to(output):
            search_sources_cmd(query, source, shape, max_results or 10, settings)
        return
    with reported():
        response = api.search(
            query, tier=tier, max_results=max_results, strategy=strategy.value,
            providers=provider or None, settings=settings,
        )  # fmt: skip
    _print_response(response, shape, output)


def _print_response(response: SearchResponse, shape: str, output: Path | None) -> None:
    """Say who answered (in the log), then the response in ``shape`` to ``output`` or the terminal."""
    for name, why in response.attempts:
        log.info("%s was passed over: %s", name, why)
    log.info("answered by %s", response.provider)
    with written_to(output):
        if shape == "jsonl":
            for result in response.results:
                echo_json(result, indent=None)
        elif shape == "json":
            echo_json(response)
        else:
            from sourcewise.doors.render import render

            echo(render(response, shape))


@app.command()
def providers(
    name: Annotated[
        str | None, typer.Argument(help="With --reset: the provider to lift (default: all).")
    ] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Lift the suspension of NAME (or of all).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """List the web search providers: configured or not, suspended or not.

    Examples: sourcewise providers; sourcewise providers --reset brave
    """
    settings = setup(verbose, config)
    if name is not None and not reset:
        fail(InvalidOption(f"a provider name ({name!r}) is only taken with --reset"), 2)
    if reset:
        with reported():
            lifted = api.reset_providers(name, settings)
        echo(f"lifted {lifted} suspension(s)")
        return
    rows = api.provider_status(settings)
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        state = "ready" if row.configured else "not configured"
        if row.suspended_until:
            state = f"suspended until {row.suspended_until:%Y-%m-%d %H:%M:%S} UTC ({row.suspended_reason})"
        chain = "" if row.in_chain else " [not in chain]"
        echo(f"{row.name:<18} {state}{chain} - {row.detail}")


@app.command()
def rate(
    url: Annotated[str, typer.Argument(help="The page to rate.")],
    query: Annotated[str | None, typer.Option("--query", "-q", help="What the user asked.")] = None,
    config: ConfigOpt = None,
) -> None:
    """Rate one URL: tier, reliability score and why.

    Example: sourcewise rate https://react.dev/reference/rsc/server-components
    """
    settings = setup(False, config)
    with reported():
        rating = api.rate_source(url, query, settings=settings)
    echo_json(rating, indent=None)


def _day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fail(InvalidOption(f"--today needs a date like 2026-11-21, got {text!r}"), 2)


TodayOpt = Annotated[str | None, typer.Option("--today", help="Resolve dates against this day (YYYY-MM-DD).")]


@app.command("route")
def route_cmd(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    today: TodayOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Decide whether to search the web, fetch the URLs in the question, or skip.

    Example: sourcewise route "What changed in Python 3.14?"
    """
    settings = setup(False, config)
    with reported():
        decision = routing.route(question, today=_day(today), settings=settings)
    if as_json:
        echo_json(decision)
        return
    echo(present.render_route(decision))


@app.command("plan")
def plan_cmd(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            "-k",
            metavar="KIND",
            help="A kind of source to plan for (repeatable): chat, email, knowledge_base, "
            "project_tracker, web. (--source names sources everywhere else.)",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    broaden: Annotated[int, typer.Option("--broaden", help="Apply this many broadening steps.")] = 0,
    today: TodayOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Query type, keywords, entities, filters and one query per source kind.

    Example: sourcewise plan "who approved the budget last week" --kind chat
    """
    settings = setup(False, config)
    with reported():
        result = routing.plan(question, kind or None, today=_day(today), settings=settings)
    for _ in range(max(0, broaden)):
        result = widen.broaden(result) or result
    if as_json:
        echo_json(result)
        return
    echo(f"type: {result.query_type.kind} ({', '.join(result.query_type.signals) or 'no signal'})")
    echo(f"keywords: {', '.join(result.keywords)}")
    echo(f"entities: {', '.join(result.entities)}")
    echo(f"mode: {result.mode} ({result.mode_reason})")
    for q in result.sources:
        echo(f"{q.source} [{q.mode}]: {q.query}")


@app.command("context")
def context_cmd(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    allow_private: Annotated[
        bool, typer.Option("--allow-private", help="Allow private and loopback addresses (intranet).")
    ] = False,
    today: TodayOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Search or fetch only when the question needs the web; print the web context.

    Exits 0 with the context (or when the question needs no web), 3 when no provider answered,
    1 when the URLs in the question could not be read.
    Example: sourcewise context "latest Next.js release notes"
    """
    settings = setup(True, config, allow_private=allow_private or None)
    with reported():
        outcome = routing.conditional_web_search(question, today=_day(today), settings=settings)
    if as_json:
        echo_json(outcome)
    elif outcome.context:
        echo(outcome.context)
    if outcome.error is not None:  # zero results is no error: a warning was logged, exit 0
        if not as_json and outcome.no_provider:  # the warning above gave the whole reason
            echo("error: no web context: no search provider could answer (see the warning above)", err=True)
        elif not as_json:
            echo(f"error: {outcome.error}", err=True)
        raise typer.Exit(3 if outcome.no_provider else 1)


@app.command("fetch")
def fetch_cmd(
    url: Annotated[str, typer.Argument(help="The page to read.")],
    prompt: Annotated[
        str | None, typer.Option("--prompt", help="Show the passages that answer this.")
    ] = None,
    max_chars: Annotated[int | None, typer.Option("--max-chars", help="Characters per slice.")] = None,
    start: Annotated[int, typer.Option("--start", help="Where the slice starts.")] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Fetch anew, ignoring the cache.")] = False,
    allow_private: Annotated[
        bool, typer.Option("--allow-private", help="Allow private and loopback addresses (intranet).")
    ] = False,
    ignore_robots: Annotated[
        bool, typer.Option("--ignore-robots", help="Fetch this page even if the site's robots.txt refuses.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Fetch a page: main content as Markdown, title, tier, score and passages for --prompt.

    Example: sourcewise fetch https://peps.python.org/pep-0008/ --prompt "line length"
    """
    settings = setup(verbose, config)
    with reported():
        try:
            page = pages.fetch(
                url,
                prompt,
                allow_private=allow_private or None,
                use_cache=not no_cache,
                max_chars=max_chars,
                start=start,
                settings=settings,
                obey_robots=not ignore_robots,
            )
        except RobotsDisallowed as exc:  # the user named this page: say how to read it anyway
            raise RobotsDisallowed(exc.url, f"{exc.detail}; --ignore-robots fetches it anyway") from None
    if as_json:
        echo_json(page)
        return
    echo(present.render_page(page, lambda start: f"--start {start}"))
