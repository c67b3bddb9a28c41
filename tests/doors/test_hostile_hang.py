"""Issue 29, item 2: a source whose read never returns holds only its own threads.

The source here is a plug-in written only for this test (registered through an entry point, as a
third-party one would be) whose search reads a real FIFO that no process writes: the read blocks
in the kernel, past every deadline, until the test lets it go. On the code before, each such read
took one of the event loop's shared executor threads (six on two cores); after a few asks to it,
a plain knowledge-base search queued behind them and answered 504 when the door's time limit
fired. Now each source has its own threads (``options.workers``), so the blocked source holds two
and every other source answers as before.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_cli import run_process
from test_hostile_doors import rollback_state

from sourcewise import load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.models import SourceQuery, SourceResult
from sourcewise.registry import forget_plugins
from sourcewise.sources import Source

import doorkit
from doorkit import uvicorn_thread
from plugin_examples import install_plugins

pytestmark = pytest.mark.timeout(120)  # a regression hangs on the FIFO: fail instead
WORKERS = 2


class _Reads:
    """How many reads of the FIFO have started and how many have returned (all threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = 0
        self.returned = 0


READS = _Reads()


def _read(path: str) -> bytes:
    with READS.lock:
        READS.started += 1
    try:
        with open(path, "rb") as fifo:  # blocks until a writer opens it: never, until the test ends
            return fifo.read()
    finally:
        with READS.lock:
            READS.returned += 1


class StuckSource(Source):
    """A plug-in whose every search blocks in a read (its I/O runs in ``Source.run``, as documented)."""

    type = "stuck"
    kind = "knowledge_base"
    authority = "wiki"

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        await self.run(_read, str(self.options.require_path(self.name)))
        return self.result(query, [], [])


@pytest.fixture
def stuck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plug-in installed (a dist-info on sys.path) and its FIFO; every blocked read let go after."""
    install_plugins(tmp_path, monkeypatch, f"[sourcewise.sources]\nstuck = {__name__}:StuckSource\n")
    fifo = tmp_path / "never-written.fifo"
    os.mkfifo(fifo)
    READS.started = READS.returned = 0
    try:
        yield fifo
    finally:
        forget_plugins()
        while READS.returned < READS.started:  # a writer that closes at once: each read gets EOF
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            threading.Event().wait(0.05)


def _settings(tmp_path: Path, fifo: Path) -> Settings:
    return load_settings(
        state_dir=rollback_state(tmp_path), providers=["searxng"], plugins=["stuck"], source_timeout=3,
        sources={"stuck": {"type": "stuck", "path": str(fifo), "workers": WORKERS}},
    )  # fmt: skip


async def _post_all(base: str, bodies: list[tuple[str, dict[str, object]]]) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        return list(await asyncio.gather(*(client.post(path, json=body) for path, body in bodies)))


def test_a_blocked_source_holds_its_own_threads_and_every_other_source_answers(
    tmp_path: Path, stuck: Path
) -> None:
    settings = _settings(tmp_path, stuck)
    ask_stuck = (
        "/ask",
        {"question": "how do I roll back a deployment", "sources": ["stuck"], "effort": "quick"},
    )
    kb_search = ("/sources/search", {"query": "roll back deployment", "sources": ["kb"]})
    ask_both = (
        "/ask",
        {"question": "how do I roll back a deployment", "sources": ["stuck", "kb"], "effort": "quick"},
    )
    doors = DoorSettings(rate_limit=0, request_timeout=20)
    with uvicorn_thread(create_app(settings, doors)) as base:
        warm = asyncio.run(_post_all(base, [kb_search]))  # the index opened once, before the race
        assert warm[0].status_code == 200, warm[0].text
        # Eight asks to the blocked source at once: each ends at its deadline, its read does not.
        first = asyncio.run(_post_all(base, [ask_stuck] * 8))
        assert [r.status_code for r in first] == [503] * 8, first[0].text
        assert {r.json()["error"]["reports"][0]["status"] for r in first} == {"timeout"}
        # The per-source limit: two reads started, both blocked, however many asks came.
        assert (READS.started, READS.returned) == (WORKERS, 0)
        # With those reads still blocked: plain searches and asks that include the blocked source.
        second = asyncio.run(_post_all(base, [kb_search] * 6 + [ask_both] * 4 + [ask_stuck] * 4))
        assert (READS.started, READS.returned) == (WORKERS, 0)  # still blocked; nothing new started
    searches, mixed, again = second[:6], second[6:10], second[10:]
    for response in searches:  # on the code before: 504 after the door's 20 s, behind the blocked reads
        assert response.status_code == 200, response.text
        assert response.json()[0]["hits"], response.text
    for response in mixed:
        assert response.status_code == 200, response.text
        reports = {r["source"]: r["status"] for r in response.json()["reports"]}
        assert reports == {"stuck": "timeout", "kb": "ok"}
        assert response.json()["citations"]
    assert [r.status_code for r in again] == [503] * 4


def test_a_cli_ask_whose_source_blocks_exits_at_its_deadline(tmp_path: Path, stuck: Path) -> None:
    """On the code before, ``ask`` printed its answer at the deadline and then never exited: the
    interpreter joined the executor thread still blocked in the read. The source's own threads are
    daemons, so the process ends (exit 3: every source failed) with its read still blocked."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'plugins = ["stuck"]\nstate_dir = "{tmp_path / "state"}"\nsource_timeout = 2\n\n'
        f'[sources.stuck]\ntype = "stuck"\npath = "{stuck}"\n',
        "utf-8",
    )
    site = str(tmp_path / "site")  # the plug-in's dist-info
    # this module (the plug-in names it) and the helpers it imports, wherever the tests are laid out
    folders = [os.path.dirname(os.path.abspath(__file__)), str(Path(doorkit.__file__).parent)]
    path = os.pathsep.join([site, *folders, os.environ.get("PYTHONPATH", "")])
    done = run_process(
        ["ask", "how do I roll back", "--source", "stuck", "--config", str(config), "--effort", "quick"],
        tmp_path,
        PYTHONPATH=path,
    )  # fails with TimeoutExpired (60 s) when the process does not exit
    assert done.returncode == 3, done.stderr
    assert "no source could answer (stuck: timeout)" in done.stderr
