"""``sourcewise index`` (with progress at a terminal) and ``sourcewise cache clear``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sourcewise.doors.cli.common import (
    ConfigOpt,
    VerboseOpt,
    console,
    echo,
    echo_json,
    fail,
    new_app,
    reported,
    setup,
)
from sourcewise.errors import InvalidOption

if TYPE_CHECKING:
    from sourcewise.config import Settings
    from sourcewise.sources.kb.index import IndexReport, Progress
    from sourcewise.sources.kb.source import KnowledgeBase

__all__ = ["app", "index_progress"]

app = new_app()
cache_app = new_app(help="The page cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")

STEPS = {"files": "indexing files", "model": "loading the semantic model", "embed": "embedding chunks"}


@contextmanager
def index_progress(live: bool) -> Iterator[Progress | None]:
    """A rich progress display on stderr (files, rate, time left) when ``live``; else nothing."""
    if not live:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import (
        Progress as Bars,
    )

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn())  # fmt: skip
    with Bars(*columns, console=console(), transient=False) as bars:
        tasks: dict[str, TaskID] = {}

        def show(step: str, done: int, total: int | None) -> None:
            if step not in tasks:
                tasks[step] = bars.add_task(STEPS.get(step, step), total=total, rate="")
            task = tasks[step]
            elapsed = bars.tasks[task].elapsed or 0.0
            rate = f"{done / elapsed:,.0f}/s" if elapsed > 0.5 and done else ""
            bars.update(task, completed=done, total=total, rate=rate)

        yield show


@app.command("index")
def index_cmd(
    paths: Annotated[
        list[Path] | None, typer.Argument(metavar="PATH", help="Files or folders to index.")
    ] = None,
    kb: Annotated[
        str | None,
        typer.Option(
            "--kb",
            metavar="FILE|URL",
            help="Index file (default STATE_DIR/kb.sqlite3) or a postgresql:// URL.",
        ),
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
    """Build or update the local knowledge base from Markdown, text, rst, HTML and PDF files.

    At a terminal it shows progress (files, rate, time left; then embedding); Ctrl-C keeps what
    was committed and says so. Examples: sourcewise index ~/notes; sourcewise index --status
    """
    from sourcewise.sources.kb.source import KnowledgeBase

    settings = setup(verbose, config)
    if status:
        with reported(), KnowledgeBase(kb, settings=settings, semantic=False) as base:
            _index_status(base, as_json)
        return
    if not paths:
        fail(InvalidOption("give the files or folders to index (or --status)"), 2)
    if rebuild:
        _remove_for_rebuild(kb, paths, settings)
    live = sys.stderr.isatty() and not as_json
    where = "the index"
    try:  # Ctrl-C while the index opens, runs, closes or reports: one message, one exit code
        semantic = False if no_semantic else None
        with reported(), KnowledgeBase(kb, settings=settings, semantic=semantic) as base:
            where = base.location
            try:
                with index_progress(live) as progress:
                    report = base.index(paths, progress)
            except OSError as exc:  # a path the system refuses to look at (a name too long ...)
                fail(InvalidOption(f"cannot index {exc.filename or ''}: {exc.strerror or exc}"), 2)
        _print_report(report, as_json)
    except KeyboardInterrupt:
        echo(f"interrupted: {where} keeps the files committed before the stop; "
             "run the same command again to finish (unchanged files are skipped)", err=True)  # fmt: skip
        raise typer.Exit(130) from None


def _remove_for_rebuild(kb: str | None, paths: list[Path], settings: Settings) -> None:
    """Delete the embedded index ``--rebuild`` replaces, only once every path is there: a typo
    must not cost the index."""
    from sourcewise.sources.kb.pg import is_url
    from sourcewise.sources.kb.repair import remove_index
    from sourcewise.sources.kb.source import KnowledgeBase

    if is_url(kb):
        fail(InvalidOption("--rebuild deletes an embedded index; drop a PostgreSQL one's database"), 2)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(InvalidOption(f"no such file or folder: {', '.join(missing)}; the index is kept"), 2)
    with reported():
        remove_index(KnowledgeBase.location_for(kb, settings))


def _print_report(report: IndexReport, as_json: bool) -> None:
    if as_json:
        echo_json(report)
        return
    echo(  # file names come from outside: every line loses its control characters
        f"{report.index}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged, {len(report.skipped)} skipped "
        f"({report.chunks} chunks written, {report.embedded} embedded, {report.seconds:.1f} s)"
    )
    for item in report.skipped:
        echo(f"skipped {item.path}: {item.reason}", err=True)
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)


def _index_status(base: KnowledgeBase, as_json: bool) -> None:
    st = base.status()
    if as_json:
        echo_json(st)
        return
    run = st.last_run
    last = f"last run {run.at:%Y-%m-%d %H:%M} UTC ({run.seconds:.1f} s)" if run else "never indexed"
    missing = [c for c in st.coverage if c.state != "indexed"]
    echo(f"{st.index}: {st.bytes_on_disk / 1e6:.1f} MB on disk, {st.files} files, {st.chunks} chunks, "
         f"{st.embedded} embedded, {last}; {len(missing)} files not indexed")  # fmt: skip
    if st.embedded:
        echo(f"vectors: {st.vectors}")
    if st.restricted:
        echo(f"{st.restricted} files are not readable by everyone (their permissions or a folder's): over "
             "the network doors only [access] users named as their owner or group find them")  # fmt: skip
    for c in missing:
        echo(f"{c.state} {c.path}: {c.reason}")


@cache_app.command("clear")
def cache_clear(config: ConfigOpt = None) -> None:
    """Empty the page cache.

    Example: sourcewise cache clear
    """
    settings = setup(False, config)
    from sourcewise._sync import run_sync
    from sourcewise.session import Session

    # The session's cache: the shared one in Redis when SOURCEWISE_REDIS_URL is set.
    session = Session(settings)
    try:
        with reported():
            removed = session.page_cache.clear()
    finally:
        run_sync(session.aclose())
    echo(f"removed {removed} cached page(s)")
