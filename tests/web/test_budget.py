"""Issue 24 item 2: one budget. A provider call, a page fetch and a whole search each end by their
deadline (retries and back-off included) plus 0.5 s, against local servers on 127.0.0.1 that answer
slowly, then fail.

These tests read the wall clock, because what the issue bounds is what a user waits. The bound is
the issue's own (deadline + 0.5 s) and the deadlines are 3 s; before this issue the same calls took
2.4-3.2 times their deadline. A machine running the suite on every core delays a process by up to
half a second at times (CI once measured 3.54 s for a call that ends at 3.0 s quiet), and such
delays only ever add: so each scenario is tried up to three times, each on a fresh server and state
directory, and passes when one try ends within the bound. Code that outlasts its deadline does so
on every try and fails. Each try also checks what the code did with the time (which tries were
made, what was kept), so that a fast failure cannot pass for a bounded one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_gemini_cli import fake_gemini, on_path  # noqa: F401  (on_path: a fixture)

from sourcewise import FetchTimeout, NoProviderAvailable, load_settings
from sourcewise.config import Settings
from sourcewise.net.fetch import Fetcher
from sourcewise.web.engine import Engine

from conftest import FIXTURES
from doorkit import uvicorn_thread
from servers import LocalServer, Reply, Seen, local_server

DEADLINE = 3.0
SLACK = 0.5  # the bound: nothing may take longer than its deadline plus this
TRIES = 3  # scheduling delays only add: the quickest of three tries is what the code does
SMALL = (FIXTURES / "searxng_small.json").read_text("utf-8")
JSON = "application/json"
MCP_SERVER = Path(__file__).parent.parent / "mcp_search_server.py"


class Stopwatch:
    """Times the one bounded block of a try (set-up and the checks after it are not the user's wait)."""

    def __init__(self) -> None:
        self.took: float | None = None

    @contextmanager
    def bounded(self) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.took = time.monotonic() - start


Try = Callable[[LocalServer, Path, Stopwatch], Awaitable[None]]


async def ends_by_deadline(attempt: Try, tmp_path: Path, deadline: float = DEADLINE) -> None:
    """Run ``attempt`` (its checks inside) on a fresh local server and directory until one try's
    bounded block ends by ``deadline`` + ``SLACK``, at most ``TRIES`` times."""
    took: list[float] = []
    for n in range(TRIES):
        watch = Stopwatch()
        with local_server() as server:
            await attempt(server, tmp_path / f"try{n}", watch)
        assert watch.took is not None, "the try timed no block"
        took.append(watch.took)
        if watch.took <= deadline + SLACK:
            return
    pytest.fail(f"took {', '.join(f'{t:.2f}' for t in took)} s for a {deadline:g} s deadline, every try")


def replies(*answers: Reply) -> Callable[[Seen], Reply]:
    """A route answering with ``answers`` in turn, then the last one again."""
    queue = list(answers)
    return lambda _seen: queue.pop(0) if len(queue) > 1 else queue[0]


def engine_for(server: LocalServer, where: Path, chain: list[str]) -> Engine:
    settings: Settings = load_settings(
        providers=chain,
        timeout=DEADLINE,
        state_dir=where / "state",
        provider_options={
            "searxng": {"url": f"{server.url}/sx"},
            "brave": {"url": f"{server.url}/brave", "api_key": "k"},
        },
    )
    return Engine(settings)


async def test_a_search_whose_providers_answer_slowly_then_fail_ends_by_its_deadline(tmp_path: Path) -> None:
    """brave fails at once (its retry fits: the suite's retry delay is 0.01 s), then answers slowly
    with a 503; searxng, next in the chain, gets only what is left and hangs past it."""

    async def attempt(server: LocalServer, where: Path, watch: Stopwatch) -> None:
        server.route("/brave", replies(Reply(503, "busy"), Reply(503, "busy", delay=1.2)))
        server.route("/sx/search", Reply(200, SMALL, content_type=JSON, delay=30))
        engine = engine_for(server, where, ["brave", "searxng"])
        with watch.bounded(), pytest.raises(NoProviderAvailable) as info:
            await engine.asearch("react server components")
        assert server.hits("/brave") == 2  # the retry fitted and was made
        assert server.hits("/sx/search") == 1  # asked with what was left, not a fresh deadline
        assert "no answer within" in dict(info.value.attempts)["searxng"]

    await ends_by_deadline(attempt, tmp_path)


async def test_both_rounds_of_a_progressive_search_share_one_deadline(tmp_path: Path) -> None:
    """The second round (examples) hangs: it is cut at the search's deadline and the first round
    is what the user gets, with a warning saying so."""

    async def attempt(server: LocalServer, where: Path, watch: Stopwatch) -> None:
        server.route(
            "/sx/search", replies(Reply(200, SMALL, content_type=JSON, delay=1.0), Reply(503, "x", delay=30))
        )
        engine = engine_for(server, where, ["searxng"])
        with watch.bounded():
            response = await engine.asearch("react server components", strategy="progressive")
        assert response.provider == "searxng"
        assert response.results
        assert any("follow-up search failed" in w for w in response.warnings)

    await ends_by_deadline(attempt, tmp_path)


async def test_a_fetch_that_answers_slowly_then_fails_ends_by_its_deadline(tmp_path: Path) -> None:
    """A quick 503 (its retry fits), then a page that hangs: cut at the fetch's one deadline."""

    async def attempt(server: LocalServer, where: Path, watch: Stopwatch) -> None:
        server.route("/page", replies(Reply(503, "busy"), Reply(200, "<p>late</p>", delay=30)))
        settings = load_settings(state_dir=where / "state", timeout=DEADLINE, fetch_retries=3)
        fetcher = Fetcher(settings)
        try:
            with watch.bounded(), pytest.raises(FetchTimeout):
                await fetcher.document(server.url + "/page", allow_private=True)
        finally:
            await fetcher.aclose()
        assert server.hits("/page") == 2

    await ends_by_deadline(attempt, tmp_path)


def _mcp_settings(where: Path, arguments: dict[str, str], url: str | None = None) -> Settings:
    place: dict[str, Any] = {"url": url} if url else {"command": [sys.executable, str(MCP_SERVER)]}
    mcp = {**place, "tool": "slow_failing", "arguments": arguments}
    return load_settings(
        providers=["mcp"], state_dir=where / "state", timeout=DEADLINE, provider_options={"mcp": mcp}
    )


async def _failed_mcp_search(settings: Settings, watch: Stopwatch) -> str:
    """Search once (timed), expecting the MCP provider to fail; what the report says of it."""
    engine = Engine(settings)
    try:
        with watch.bounded(), pytest.raises(NoProviderAvailable) as info:
            await engine.asearch("react server components")
    finally:
        await engine.aclose()
    return dict(info.value.attempts)["mcp"]


async def test_an_mcp_provider_that_answers_slowly_then_fails_ends_by_its_deadline(tmp_path: Path) -> None:
    """The tool (on a server already running: Streamable HTTP) waits 2 of the 3 s, then fails; the
    failure is reported at once, not retried past the deadline."""
    from mcp_search_server import app

    async def attempt(_server: LocalServer, where: Path, watch: Stopwatch) -> None:
        with uvicorn_thread(app.streamable_http_app()) as base:
            said = await _failed_mcp_search(
                _mcp_settings(where, {"q": "{query}", "seconds": "2.0"}, f"{base}/mcp"), watch
            )
        assert "the tool 'slow_failing' failed" in said

    await ends_by_deadline(attempt, tmp_path)


async def test_an_mcp_provider_that_hangs_is_cut_at_its_deadline(tmp_path: Path) -> None:
    """A stdio server started by the call (the SDK imported, the server started, all within the
    budget: a cold import of the SDK alone can take longer than the deadline on a busy machine)
    whose tool hangs: the call ends at its deadline."""

    async def attempt(_server: LocalServer, where: Path, watch: Stopwatch) -> None:
        said = await _failed_mcp_search(_mcp_settings(where, {"q": "{query}", "seconds": "60"}), watch)
        assert "no answer within" in said

    await ends_by_deadline(attempt, tmp_path)


#: Run in a fresh interpreter: the MCP SDK's import is made to take 4 s (a cold import took 6.6 s
#: on this machine under load: `python -X importtime -c "import mcp"`), then a search is timed.
COLD_START = """
import asyncio, importlib.abc, importlib.machinery, json, os, sys, time
from pathlib import Path

class SlowImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "mcp":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        real = spec.loader
        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return real.create_module(spec)
            def exec_module(self, module):
                time.sleep(4)
                real.exec_module(module)
        spec.loader = Loader()
        return spec

sys.meta_path.insert(0, SlowImport())
from sourcewise import NoProviderAvailable, load_settings
from sourcewise.web.engine import Engine

async def main():
    mcp = {"command": [sys.executable, sys.argv[2]], "tool": "slow_failing",
           "arguments": {"q": "{query}", "seconds": "60"}}
    settings = load_settings(providers=["mcp"], state_dir=Path(sys.argv[1]), timeout=float(sys.argv[3]),
                             provider_options={"mcp": mcp})
    engine = Engine(settings)
    start = time.monotonic()
    try:
        await engine.asearch("react server components")
        said = "answered"
    except NoProviderAvailable as exc:
        said = dict(exc.attempts)["mcp"]
    took = time.monotonic() - start
    print(json.dumps({"took": took, "said": said}), flush=True)

asyncio.run(main())
os._exit(0)  # measured above; the import thread still sleeping is joined at a normal exit (seconds)
"""


async def test_a_slow_first_import_of_the_mcp_sdk_does_not_outlast_the_deadline(tmp_path: Path) -> None:
    """The SDK is imported in a thread, so the deadline fires on time; on the event loop, the
    import blocked the deadline and the call took the import's time and more."""

    async def attempt(_server: LocalServer, where: Path, watch: Stopwatch) -> None:
        out = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", COLD_START, str(where / "state"), str(MCP_SERVER), str(DEADLINE)],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        assert "no answer within" in seen["said"], seen
        watch.took = float(seen["took"])  # timed inside the fresh interpreter, around the search alone

    await ends_by_deadline(attempt, tmp_path)


def _cli_settings(where: Path, **extra: Any) -> Settings:
    return load_settings(providers=["gemini-cli"], state_dir=where / "state", timeout=DEADLINE, **extra)


@pytest.mark.usefixtures("on_path")  # tmp_path / "bin" on PATH: a fake gemini is written there
async def test_gemini_cli_that_answers_slowly_then_fails_ends_by_its_deadline(tmp_path: Path) -> None:
    fake_gemini(tmp_path / "bin", "", code=1, stderr="backend down", sleep=2.0)

    async def attempt(_server: LocalServer, where: Path, watch: Stopwatch) -> None:
        with watch.bounded(), pytest.raises(NoProviderAvailable) as info:
            await Engine(_cli_settings(where)).asearch("react server components")
        assert "status 1: backend down" in dict(info.value.attempts)["gemini-cli"]

    await ends_by_deadline(attempt, tmp_path)


@pytest.mark.usefixtures("on_path")
async def test_gemini_cli_keeps_a_late_answer_when_its_links_cannot_be_resolved_in_time(
    tmp_path: Path,
) -> None:
    """The CLI answers after a second or two of its 3 s, citing grounding redirects that hang. Resolving gets what
    is left of the call's budget (not all of it again), so the answer arrives by the deadline with
    the links as they are, instead of the whole call being cut and the answer lost."""

    async def attempt(server: LocalServer, where: Path, watch: Stopwatch) -> None:
        server.route(
            "/grounding-api-redirect/1", Reply(302, "", headers={"Location": "https://react.dev/"}, delay=30)
        )
        link = f"{server.url}/grounding-api-redirect/1"
        prose = f"React Server Components render on the server.[1]\n\nSources:\n[1] react.dev ({link})"
        fake_gemini(tmp_path / "bin", json.dumps({"response": prose, "stats": {}}), sleep=1.0)
        settings = _cli_settings(where, gemini_redirect_hosts=["127.0.0.1"], allow_hosts=["127.0.0.1"])
        with watch.bounded():
            response = await Engine(settings).asearch("react server components")
        assert response.provider == "gemini-cli"
        assert response.answer is not None
        assert "render on the server" in response.answer
        assert [r.url for r in response.results] == [link]
        assert response.results[0].tier == 4  # unresolved: rated as a link, never for its host
        assert server.hits("/grounding-api-redirect/1") == 1

    await ends_by_deadline(attempt, tmp_path)
