"""CLI commands over private sources and ``ask``: registered on the main app by ``doors/cli/main.py``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from sourcewise._lazy import lazy_module
from sourcewise.doors.cli.common import (
    ConfigOpt,
    OutputOpt,
    VerboseOpt,
    console,
    echo,
    echo_json,
    fail,
    new_app,
    output_format,
    reported,
    setup,
    still_indexing,
    written_to,
)
from sourcewise.doors.formats import FORMS
from sourcewise.effort import effort_help
from sourcewise.errors import InvalidOption, SourceStillIndexing
from sourcewise.text.words import printable

if TYPE_CHECKING:
    from rich.console import Console

    from sourcewise.answer import extractive
    from sourcewise.config import Settings
    from sourcewise.doors import present
    from sourcewise.models import Answer, Cycle, Retrieval, SourceReport
    from sourcewise.session import Session
    from sourcewise.sources import api as sources_api
else:  # imported when a command first needs them: ``--help`` starts without them
    sources_api = lazy_module("sourcewise.sources.api")
    present = lazy_module("sourcewise.doors.present")
    extractive = lazy_module("sourcewise.answer.extractive")

__all__ = ["app", "render_retrieval", "search_sources_cmd", "sources_app"]

app = new_app()

SourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        "-S",
        help="A source to search (repeatable): a configured name, kb, web, code:PATH, slack:PATH, "
        "mail:PATH or github:PATH.",
    ),
]
def _forms(command: str) -> str:
    return ", ".join(FORMS[command]) + "."


ICON = {"ok": "✓", "empty": "·", "timeout": "⏱", "rate_limited": "⏸", "unavailable": "✗", "failed": "✗"}


def search_sources_cmd(query: str, sources: list[str], fmt: str, limit: int, settings: Settings) -> None:
    """``sourcewise search QUERY --source ...``: the query in each source's own syntax; ``jsonl``
    prints one hit per line (each names its source)."""
    with reported():
        results = sources_api.search_sources(query, sources, limit=limit, settings=settings)
    if fmt == "json":
        echo_json(results)
    elif fmt == "jsonl":
        for hit in (h for r in results for h in r.hits):
            echo_json(hit, indent=None)
    else:
        echo(present.render_results(results, fmt))
    if not any(r.hits for r in results):
        typer.echo("warning: no results", err=True)


@app.command("search-sources")
def search_sources_command(
    query: Annotated[str, typer.Argument(help="Words plus the sources' filters (from:, in:, after: ...).")],
    source: SourceOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help=_forms("search-sources"))] = "quick",
    as_json: Annotated[bool, typer.Option("--json", help="The results as JSON.")] = False,
    as_jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON hit per line.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Results per source, 1-200.")] = 10,
    output: OutputOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Search private sources (default: the knowledge base) with a query in their own syntax.

    Example: sourcewise search-sources "token expiry after:2025-01-01" -S kb
    """
    settings = setup(verbose, config)
    shape = output_format("search-sources", output, fmt, as_json, as_jsonl)
    with written_to(output):
        search_sources_cmd(query, source or ["kb"], shape, limit, settings)


def _progress(screen: Console):  # type: ignore[no-untyped-def]
    from sourcewise.models import SourceReport

    def show(report: SourceReport | str) -> None:
        if isinstance(report, SourceReport):
            detail = f"{report.hits} results" if report.status == "ok" else report.status.replace("_", " ")
            name = extractive.strip_controls(report.source)
            screen.print(f"{ICON[report.status]} {name}: {detail} ({report.elapsed_ms:.0f} ms)")

    return show


async def _ask(
    question: str,
    sources: list[str] | None,
    reading: str | None,
    settings: Settings,
    live: bool,
    pick: bool,
    effort: str = "balanced",
) -> Answer:
    """The command's one session: the answer, and after a clarifying question (``pick``: asked
    on a terminal) the answer for the reading chosen."""
    from sourcewise.session import Session

    async with Session(settings) as session:
        answer = await _run(session, question, sources, reading, live, effort)
        if answer.clarification and pick:
            typer.echo(printable(answer.clarification))  # one reading per line
            choice = typer.prompt("number", type=int, default=1)
            if not 1 <= choice <= len(answer.readings):
                fail(InvalidOption(f"choose 1-{len(answer.readings)}"), 2)
            answer = await _run(session, question, sources, answer.readings[choice - 1].label, live, effort)
        return answer


async def _run(
    session: Session, question: str, sources: list[str] | None, reading: str | None, live: bool, effort: str
) -> Answer:
    from sourcewise.loops.ask import aask

    screen = console()
    if live:
        with screen.status("searching every source at once…"):
            return await aask(
                question, sources=sources, reading=reading, effort=effort,  # type: ignore[arg-type]
                session=session, progress=_progress(screen),
            )  # fmt: skip
    return await aask(question, sources=sources, reading=reading, effort=effort, session=session)  # type: ignore[arg-type]


@app.command("ask")
def ask_cmd(
    question: Annotated[str, typer.Argument(help="The question, in any language.")],
    source: SourceOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help=_forms("ask"))] = "quick",
    as_json: Annotated[bool, typer.Option("--json", help="The whole answer as JSON.")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each factor of each source's relevance.")
    ] = False,
    reading: Annotated[
        str | None,
        typer.Option("--reading", help="The reading of an ambiguous question, e.g. 'database migration'."),
    ] = None,
    effort: Annotated[
        str,
        typer.Option(
            "--effort",
            metavar="LEVEL",
            help=effort_help(),
        ),
    ] = "balanced",
    output: OutputOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Answer a question from every source at once, each sentence citing the source behind it.

    Examples: sourcewise ask "How do I index my notes?";
    sourcewise ask "Why did the deploy fail?" -S slack -S kb --format deep -o answer.md
    """
    from sourcewise._sync import run_sync

    settings = setup(verbose, config)
    fmt = output_format("ask", output, fmt, as_json)
    live = sys.stderr.isatty() and fmt != "json"
    pick = sys.stdin.isatty() and fmt != "json"
    with reported():
        try:
            answer = run_sync(_ask(question, source or None, reading, settings, live, pick, effort))
        except KeyboardInterrupt:
            typer.echo("interrupted: every source was stopped", err=True)
            raise typer.Exit(130) from None
    with written_to(output):
        if fmt == "json":
            echo_json(answer)
        else:
            echo(present.render_answer(answer, fmt, explain=explain, specs=source or ()))
    if not answer.hits and not answer.clarification:
        _not_ready(answer.reports)
        _exit_if_failed_everywhere(answer.reports)


sources_app = new_app(help="List the sources, or add one (add-mcp).")
app.add_typer(sources_app, name="sources")


@sources_app.callback(invoke_without_command=True)
def sources_cmd(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for machines.")] = False,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """List the sources: configured or built in, ready or not, how big and how fresh, and
    whether `ask` reads them when no --source is named (and why). `sources add-mcp` adds one.

    Example: sourcewise sources --json
    """
    if ctx.invoked_subcommand is not None:
        return
    settings = setup(verbose, config)
    with reported():
        infos = sources_api.source_info(settings=settings)
    if as_json:
        echo_json(infos)
        return
    for info in infos:
        state = "ready" if info.ready else "not ready"
        size = f", {info.items} items" if info.items is not None else ""
        fresh = f", updated {info.updated:%Y-%m-%d %H:%M}" if info.updated else ""
        where = f" {extractive.strip_controls(info.location)}" if info.location else ""
        detail = f" - {extractive.strip_controls(info.detail)}" if info.detail else ""
        detail += f" [ask: {info.in_ask}]" if info.in_ask else " [ask: only when named with -S]"
        typer.echo(
            f"{info.name} ({info.type}, {info.kind.replace('_', ' ')}){where}: {state}{size}{fresh}{detail}"
        )


def _cycle_lines(cycle: Cycle) -> list[str]:
    lines = [f"Cycle {cycle.number}:"]
    lines += [f"  searched {q}" for q in cycle.queries] or ["  searched nothing (every source failed)"]
    lines.append(f"  found {cycle.found} hits, {cycle.new} new; {cycle.relevant} at 0.7 or more")
    if cycle.broadened:
        lines.append(f"  relaxed: {', '.join(cycle.broadened)}")
    if cycle.excluded:
        lines.append(f"  excluded (below 0.2): {', '.join(cycle.excluded)}")
    if cycle.uncovered:
        lines.append(f"  uncovered: {', '.join(cycle.uncovered)}")
    for item in cycle.learned:
        target = f" for {', '.join(item.stands_for)}" if item.stands_for else " (context)"
        lines.append(f"  learned {item.term!r} ({item.via} in {item.origin}){target}")
    if cycle.feedback:
        lines.append(f"  feedback words for the next query: {', '.join(cycle.feedback)}")
    lines.append(f"  -> {cycle.decision}")
    return lines


def render_retrieval(found: Retrieval) -> str:
    """Seed 004's output: the candidates with relevance, reason and what is missing, then each cycle."""
    lines = [f"Task: {found.task}", f"Key terms: {', '.join(found.key_terms) or '(none)'}", ""]
    lines.append(f"Result: {found.summary}")
    for c in found.candidates:
        where = c.hit.location + (f"  {c.hit.title.partition('::')[2]}" if "::" in c.hit.title else "")
        mark = "*" if c.relevant else " "  # the 0.7+ set
        lines.append(f" {mark}{c.relevance:.2f} {c.band:<6} {where}  (cycle {c.cycle}, {c.scorer})")
        lines.append(f"         {c.reason}")
        if c.missing:
            lines.append(f"         missing: {', '.join(c.missing)}")
    lines.append("")
    for cycle in found.cycles:
        lines.extend(_cycle_lines(cycle))
    lines.extend(f"warning: {w}" for w in found.warnings)
    return "\n".join(extractive.strip_controls(line) for line in lines)


@app.command("retrieve")
def retrieve_cmd(
    task: Annotated[str, typer.Argument(help="What you are about to do, e.g. 'Fix the token expiry bug'.")],
    source: SourceOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The whole retrieval as JSON (for agents).")
    ] = False,
    max_cycles: Annotated[int, typer.Option("--max-cycles", help="1-5; 1 is a single pass.")] = 3,
    include: Annotated[
        list[str] | None, typer.Option("--include", help="Only paths matching this glob (repeatable).")
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Leave out paths matching this glob (repeatable; default: tests)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Candidates to show, 1-50.")] = 10,
    no_model: Annotated[bool, typer.Option("--no-model", help="Rule-based relevance only.")] = False,
    output: OutputOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Find the files a task needs: search, score, learn the codebase's words, search again (3 cycles).

    Example: sourcewise retrieve "Add a rate limit to the HTTP server" --source code:.
    """
    settings = setup(verbose, config)
    shape = output_format("retrieve", output, "text", as_json)
    if not source:
        fail(InvalidOption("give at least one --source, e.g. --source code:."), 2)
    with reported():
        found = sources_api.retrieve(
            task, sources=source, max_cycles=max_cycles, include=include or (), exclude=exclude,
            limit=limit, use_model=False if no_model else None, settings=settings,
        )  # fmt: skip
    with written_to(output):
        if shape == "json":
            echo_json(found)
        else:
            echo(render_retrieval(found))
    if not found.candidates:
        reports = [r for c in found.cycles for r in c.reports]
        _not_ready(reports)
        _exit_if_failed_everywhere(reports)
        typer.echo("warning: nothing relevant found", err=True)


def _not_ready(reports: Sequence[SourceReport]) -> None:
    """A source still building its first index is not "nothing found": say so, exit 4 (the
    report's error is ``Source.still_indexing``'s, as ``search`` raises it)."""
    still_indexing(
        [
            f"{r.source}: {r.error}"
            for r in reports
            if r.status == "timeout" and r.error and SourceStillIndexing.kind in r.error
        ]
    )


def _exit_if_failed_everywhere(reports: Sequence[SourceReport]) -> None:
    """Exit 3 when every source failed: that is no "nothing found" (documented exit codes)."""
    from sourcewise.models import failed_everywhere  # here: `--help` loads no model

    if failed_everywhere(reports):
        said = "; ".join(dict.fromkeys(f"{r.source}: {r.status}" for r in reports))
        echo(f"error: no source could answer ({said})", err=True)
        raise typer.Exit(3)
