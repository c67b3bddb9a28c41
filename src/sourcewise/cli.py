"""The ``sourcewise`` command: parse, call the public API, print. Exit codes:
0 success (including zero results, with a warning on stderr), 1 other errors,
2 bad input or config, 3 no provider (or, for `ask` and `retrieve`, no source) could answer."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ._lazy import lazy_module
from ._version import __version__
from .cli_doors import add_door_commands
from .core.text import json_safe, printable
from .errors import (
    ConfigError,
    InvalidInput,
    InvalidOption,
    NoProviderAvailable,
    RobotsDisallowed,
    SourcewiseError,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from . import api, pages, routing
    from .config import Settings
    from .sources.kb import KnowledgeBase
else:  # imported when a command first needs them: ``--help`` starts without them
    api = lazy_module("sourcewise.api")
    pages = lazy_module("sourcewise.pages")
    routing = lazy_module("sourcewise.routing")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Search the web and say how far each source can be trusted.",
    # Plain click help: flags show as flags (rich help prints "--json <bool>").
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sourcewise {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Search the web and say how far each source can be trusted."""


log = logging.getLogger("sourcewise")


class Strategy(StrEnum):
    default = "default"
    official = "official"
    comprehensive = "comprehensive"
    progressive = "progressive"


class Format(StrEnum):
    quick = "quick"
    deep = "deep"
    progressive = "progressive"
    json = "json"


ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Say more on stderr.")]


class _Format(logging.Formatter):
    """Info lines as they are (the 🔍 📚 🔗 lines); warnings and errors say so."""

    def format(self, record: logging.LogRecord) -> str:
        message = printable(record.getMessage())
        return message if record.levelno < logging.WARNING else f"{record.levelname.lower()}: {message}"


def _setup(verbose: bool, config: Path | None, **overrides: object) -> Settings:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Format())
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    log.propagate = False
    from .config import load_settings

    try:
        return load_settings(config, **overrides)
    except ConfigError as exc:
        _fail(exc, 2)


def _echo(text: str = "", err: bool = False) -> None:
    """Print text that may hold outside text (titles, snippets, pages): controls removed."""
    typer.echo(printable(text), err=err)


def _echo_json(value: BaseModel | Sequence[BaseModel], indent: int | None = 2) -> None:
    """JSON as faithful as the data, with terminal-unsafe characters as ``\\uXXXX`` escapes."""
    data = (
        [v.model_dump(mode="json") for v in value]
        if isinstance(value, Sequence)
        else value.model_dump(mode="json")
    )
    typer.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=indent)))


def _fail(exc: Exception, code: int) -> NoReturn:
    _echo(f"error: {exc}", err=True)
    raise typer.Exit(code)


@contextmanager
def _reported() -> Iterator[None]:
    """Turn a library error into its message on stderr and the documented exit code."""
    try:
        yield
    except SourcewiseError as exc:
        _guard(exc)


def _guard(exc: SourcewiseError) -> NoReturn:
    if isinstance(exc, InvalidInput | ConfigError):
        _fail(exc, 2)
    if isinstance(exc, NoProviderAvailable):
        _fail(exc, 3)
    _fail(exc, 1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to search for (3+ characters on the web).")],
    tier: Annotated[int | None, typer.Option("--tier", "-t", help="Only this tier (1-4).")] = None,
    max_results: Annotated[int | None, typer.Option("--max-results", "-n", help="1-50.")] = None,
    strategy: Annotated[
        Strategy, typer.Option("--strategy", "-s", help="Which results, in which order.")
    ] = Strategy.default,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="How to print them.")] = Format.quick,
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
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Search the web (or, with --source, private sources): de-duplicated, rated and ranked."""
    settings = _setup(verbose, config)
    if source:
        from .cli_sources import search_sources_cmd

        search_sources_cmd(query, source, "json" if as_json else fmt.value, max_results or 10, settings)
        return
    with _reported():
        response = api.search(
            query,
            tier=tier,
            max_results=max_results,
            strategy=strategy.value,
            providers=provider or None,
            settings=settings,
        )
    for name, why in response.attempts:
        log.info("%s was passed over: %s", name, why)
    log.info("answered by %s", response.provider)
    if as_jsonl:
        for result in response.results:
            _echo_json(result, indent=None)
    elif as_json or fmt is Format.json:
        _echo_json(response)
    else:
        from .core.render import render

        _echo(render(response, fmt.value))


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
    """List the web search providers: configured or not, suspended or not."""
    settings = _setup(verbose, config)
    if name is not None and not reset:
        _fail(InvalidOption(f"a provider name ({name!r}) is only taken with --reset"), 2)
    if reset:
        with _reported():
            lifted = api.reset_providers(name, settings)
        _echo(f"lifted {lifted} suspension(s)")
        return
    rows = api.provider_status(settings)
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        state = "ready" if row.configured else "not configured"
        if row.suspended_until:
            state = f"suspended until {row.suspended_until:%Y-%m-%d %H:%M:%S} UTC ({row.suspended_reason})"
        chain = "" if row.in_chain else " [not in chain]"
        _echo(f"{row.name:<18} {state}{chain} - {row.detail}")


@app.command()
def rate(
    url: Annotated[str, typer.Argument(help="The page to rate.")],
    query: Annotated[str | None, typer.Option("--query", "-q", help="What the user asked.")] = None,
    config: ConfigOpt = None,
) -> None:
    """Rate one URL: tier, reliability score and why."""
    settings = _setup(False, config)
    with _reported():
        rating = api.rate_source(url, query, settings=settings)
    _echo_json(rating, indent=None)


def _day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        _fail(InvalidOption(f"--today needs a date like 2026-11-21, got {text!r}"), 2)


TodayOpt = Annotated[str | None, typer.Option("--today", help="Resolve dates against this day (YYYY-MM-DD).")]


@app.command("route")
def route_cmd(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    today: TodayOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Decide whether to search the web, fetch the URLs in the question, or skip."""
    settings = _setup(False, config)
    with _reported():
        decision = routing.route(question, today=_day(today), settings=settings)
    if as_json:
        _echo_json(decision)
        return
    verb = {"search": "search", "fetch": "fetch", "skip": "skip"}[decision.action]
    _echo(f"{verb}: {decision.reason}")
    if decision.query:
        _echo(f"query: {decision.query}")
    for url in decision.urls:
        _echo(f"url: {url}")


@app.command("plan")
def plan_cmd(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="chat, email, knowledge_base, project_tracker, web (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    broaden: Annotated[int, typer.Option("--broaden", help="Apply this many broadening steps.")] = 0,
    today: TodayOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Query type, keywords, entities, filters and one query per source."""
    settings = _setup(False, config)
    with _reported():
        result = routing.plan(question, source or None, today=_day(today), settings=settings)
    for _ in range(max(0, broaden)):
        result = result.broaden() or result
    if as_json:
        _echo_json(result)
        return
    _echo(f"type: {result.query_type.kind} ({', '.join(result.query_type.signals) or 'no signal'})")
    _echo(f"keywords: {', '.join(result.keywords)}")
    _echo(f"entities: {', '.join(result.entities)}")
    _echo(f"mode: {result.mode} ({result.mode_reason})")
    for q in result.sources:
        _echo(f"{q.source} [{q.mode}]: {q.query}")


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
    """
    settings = _setup(True, config, allow_private=allow_private or None)
    with _reported():
        outcome = routing.conditional_web_search(question, today=_day(today), settings=settings)
    if as_json:
        _echo_json(outcome)
    elif outcome.context:
        _echo(outcome.context)
    if outcome.error is not None:  # zero results is no error: a warning was logged, exit 0
        if not as_json and outcome.no_provider:  # the warning above gave the whole reason
            _echo("error: no web context: no search provider could answer (see the warning above)", err=True)
        elif not as_json:
            _echo(f"error: {outcome.error}", err=True)
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
    """Fetch a page: main content as Markdown, title, tier, score and passages for --prompt."""
    settings = _setup(verbose, config)
    with _reported():
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
        _echo_json(page)
        return
    cached = " (from cache)" if page.from_cache else ""
    _echo(f"# {page.title or page.url}\n")
    _echo(f"{page.url} - tier {page.tier}, reliability {page.reliability_score}/100{cached}")
    if page.passages:
        _echo("\n## Passages\n")
        for p in page.passages:
            _echo(f"[chars {p.start}-{p.end}, score {p.score}]\n{p.text}\n")
        _echo("## Content\n")
    else:
        _echo("")
    _echo(page.content)
    if page.next_start is not None:
        _echo(f"\n[{page.total_chars - page.next_start} more characters: --start {page.next_start}]")
    if page.truncated:
        _echo("[the page was larger than the size limit and was cut]", err=True)


@app.command("index")
def index_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to index.")] = None,
    kb: Annotated[
        Path | None, typer.Option("--kb", help="Index file (default STATE_DIR/kb.sqlite3).")
    ] = None,
    no_semantic: Annotated[bool, typer.Option("--no-semantic", help="Do not compute embeddings.")] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Show the index (size, chunks, files, last run, coverage).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Delete the index (a damaged one too) and index PATHS anew.")
    ] = False,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Build or update the local knowledge base from Markdown, text, rst, HTML and PDF files."""
    from .sources.kb import KnowledgeBase
    from .sources.kbrepair import remove_index

    settings = _setup(verbose, config)
    if status:
        with _reported(), KnowledgeBase(kb, settings=settings, semantic=False) as base:
            _index_status(base, as_json)
        return
    if not paths:
        _fail(InvalidOption("give the files or folders to index (or --status)"), 2)
    if rebuild:  # only once every path is there: a typo must not cost the index
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            _fail(InvalidOption(f"no such file or folder: {', '.join(missing)}; the index is kept"), 2)
        remove_index(KnowledgeBase.location_for(kb, settings))
    try:
        with (
            _reported(),
            KnowledgeBase(kb, settings=settings, semantic=False if no_semantic else None) as base,
        ):
            try:
                report = base.index(paths)
            except OSError as exc:  # a path the system refuses to look at (a name too long ...)
                _fail(InvalidOption(f"cannot index {exc.filename or ''}: {exc.strerror or exc}"), 2)
    except KeyboardInterrupt:  # the run rolled back what it had not committed
        typer.echo(
            "interrupted: every file is in its old form or its new one; run `sourcewise index` "
            "again to finish",
            err=True,
        )
        raise typer.Exit(130) from None
    if as_json:
        _echo_json(report)
        return
    _echo(  # file names come from outside: every line loses its control characters
        f"{report.index}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged, {len(report.skipped)} skipped "
        f"({report.chunks} chunks written, {report.embedded} embedded, {report.seconds:.1f} s)"
    )
    for item in report.skipped:
        _echo(f"skipped {item.path}: {item.reason}", err=True)
    for warning in report.warnings:
        _echo(f"warning: {warning}", err=True)


def _index_status(base: KnowledgeBase, as_json: bool) -> None:
    st = base.status()
    if as_json:
        _echo_json(st)
        return
    run = st.last_run
    last = f"last run {run.at:%Y-%m-%d %H:%M} UTC ({run.seconds:.1f} s)" if run else "never indexed"
    missing = [c for c in st.coverage if c.state != "indexed"]
    _echo(f"{st.index}: {st.bytes_on_disk / 1e6:.1f} MB on disk, {st.files} files, {st.chunks} chunks, "
          f"{st.embedded} embedded, {last}; {len(missing)} files not indexed")  # fmt: skip
    for c in missing:
        _echo(f"{c.state} {c.path}: {c.reason}")


cache_app = typer.Typer(help="The page cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("clear")
def cache_clear(config: ConfigOpt = None) -> None:
    """Empty the page cache."""
    settings = _setup(False, config)
    from .net.cache import PageCache

    cache = PageCache(settings.state_dir / "pages.sqlite3", settings.cache_ttl)
    removed = cache.clear()
    cache.close()
    _echo(f"removed {removed} cached page(s)")


from . import cli_sources  # noqa: E402, F401 (registers ask and sources on app)

add_door_commands(app, _setup, _fail)


def main() -> None:
    app()
