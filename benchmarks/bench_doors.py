"""The doors under load: N concurrent requests to ``sourcewise serve`` (POST /web/search) and to
``sourcewise mcp --http`` (tools/call web_search), with 1 and 2 workers, against a
SearXNG-compatible provider served on 127.0.0.1.

``sources`` rounds: N concurrent ``POST /sources/search`` over the knowledge base, against a
minimal FastAPI endpoint (one process, one worker, the knowledge base opened once) doing the same
query through ``KnowledgeBase.search_with_warnings``: what the door costs over the bare query. The
two run at once and their rounds alternate (``SOURCEWISE_BENCH_PAIRED_ROUNDS``, default 5 each):
on a machine shared with other work, one round each minutes apart measured the load as much as
the door.

Reference, measured in the same run: the same N searches through the library in this process
(``Engine.asearch`` with ``asyncio.gather``), which pays for the provider and the pipeline but for
no door. Figures: errors, p50/p99 latency, requests/s, and the peak memory (VmHWM, summed) of
the server's processes.

``ask`` rounds: 50 concurrent ``POST /ask`` and ``tools/call ask`` over the project's own
``docs/`` indexed into the state directory's knowledge base (lexical) plus the web (the same
provider); a call counts only when its answer cites. Their reference is ``aask`` x50 in process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from sourcewise import Session, load_settings  # noqa: E402

from doorkit import free_port, wait_for  # noqa: E402

CONCURRENCY = int(os.environ.get("SOURCEWISE_BENCH_CONCURRENCY", "200"))
ASK_CONCURRENCY = int(os.environ.get("SOURCEWISE_BENCH_ASK_CONCURRENCY", "50"))
QUESTION = "How do I index my notes?"
KB_QUERY = "index notes knowledge base"
WORKERS = (1, 2)
MCP_SESSIONS = 10  # client sessions the MCP calls are spread over (each sends its share at once)


@dataclass
class Scenario:
    name: str
    command: str  # "serve" or "mcp"
    tool: str  # endpoint path for serve, tool name for mcp
    payload: dict[str, Any]
    concurrency: int
    reference: str = "search"  # which in-process run it is compared with


SCENARIOS = [
    Scenario(
        "HTTP POST /sources/search",
        "serve",
        "/sources/search",
        {"query": KB_QUERY, "sources": ["kb"]},
        CONCURRENCY,
        "sources",
    ),
    Scenario(
        "HTTP POST /web/search", "serve", "/web/search", {"query": "react server components"}, CONCURRENCY
    ),
    Scenario("MCP web_search", "mcp", "web_search", {"query": "react server components"}, CONCURRENCY),
    Scenario(
        "HTTP POST /ask",
        "serve",
        "/ask",
        {"question": QUESTION, "sources": ["kb", "web"]},
        ASK_CONCURRENCY,
        "ask",
    ),
    Scenario(
        "MCP ask", "mcp", "ask", {"question": QUESTION, "sources": ["kb", "web"]}, ASK_CONCURRENCY, "ask"
    ),
]


@dataclass
class Outcome:
    latencies: list[float]
    errors: int
    wall: float
    peak_mb: float = 0.0

    def row(self, label: str, reference: Outcome | None) -> str:
        lat = sorted(self.latencies) or [float("nan")]
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        rps = len(self.latencies) / self.wall if self.wall else 0.0
        ratio = ""
        if reference is not None:
            ref_rps = len(reference.latencies) / reference.wall
            ratio = f"{rps / ref_rps:.2f}x"
        memory = f"{self.peak_mb:.0f} MB" if self.peak_mb else "-"
        return f"| {label} | {self.errors} | {p50:.0f} ms | {p99:.0f} ms | {rps:.0f} | {ratio or '1.00x'} | {memory} |"


async def _timed(calls: list[Callable[[], Awaitable[bool]]]) -> Outcome:
    latencies: list[float] = []
    errors = 0

    async def one(call: Callable[[], Awaitable[bool]]) -> None:
        nonlocal errors
        began = time.perf_counter()
        try:
            ok = await call()
        except Exception:
            ok = False
        if ok:
            latencies.append(time.perf_counter() - began)
        else:
            errors += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(c) for c in calls))
    return Outcome(latencies, errors, time.perf_counter() - start)


async def _library(provider: _Provider, state: Path, n: int) -> Outcome:
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{provider.url}/sx"}},
        state_dir=state,
        timeout=30,
    )
    async with Session(settings) as session:

        async def call() -> bool:
            response = await session.engine.asearch("react server components")
            return bool(response.results)

        return await _timed([call] * n)


async def _library_ask(provider: _Provider, state: Path, n: int) -> Outcome:
    from sourcewise import aask
    from sourcewise.session import Session

    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{provider.url}/sx"}},
        state_dir=state,
        timeout=30,
    )

    async with Session(settings) as session:

        async def call() -> bool:
            answer = await aask(QUESTION, sources=["kb", "web"], session=session)
            return bool(answer.citations)

        return await _timed([call] * n)


def _cites(scenario: Scenario, body: Any) -> bool:
    """A search succeeds with a 200; an ask only when its answer cites something; a source search
    only when it found something."""
    if scenario.reference == "sources":
        return bool(body and body[0].get("hits"))
    return scenario.reference != "ask" or bool(body.get("citations"))


# The reference for /sources/search: the same knowledge-base query behind the least FastAPI can do.
MINIMAL = """
import asyncio, sys
from pathlib import Path
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from sourcewise import KnowledgeBase
kb = KnowledgeBase(Path(sys.argv[2]), semantic=False)
app = FastAPI()
class Body(BaseModel):
    query: str
    sources: list[str] = ["kb"]
    limit: int = 10
@app.post("/sources/search")
async def search(body: Body) -> list[dict]:
    hits, warnings = await asyncio.to_thread(kb.search_with_warnings, body.query, limit=body.limit, mode="lexical")
    return [{"source": "kb", "kind": "knowledge_base", "query": body.query,
             "hits": [h.model_dump(mode="json") for h in hits], "warnings": warnings}]
@app.get("/health")
async def health() -> dict:
    return {"status": "ok"}
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


PAIRED = int(os.environ.get("SOURCEWISE_BENCH_PAIRED_ROUNDS", "5"))


def _paired(state: Path, scenario: Scenario, env: dict[str, str]) -> list[str]:
    """/sources/search against the minimal endpoint: both servers up at once and their rounds
    alternated (``PAIRED`` each, after a warm-up round each), so that a change in the machine's
    load during the run weighs on both alike; the ratio is of the median requests/s."""
    lines: list[str] = []
    minimal = [sys.executable, "-c", MINIMAL, "{port}", str(state / "kb.sqlite3")]
    with _process(minimal, dict(os.environ), "/health") as (ref_base, ref_pid):
        asyncio.run(_http(ref_base, scenario))  # warm-up round
        for workers in WORKERS:
            serve = [
                sys.executable,
                "-m",
                "sourcewise",
                "serve",
                "--port",
                "{port}",
                "--workers",
                str(workers),
            ]
            with _process(serve, env, "/health") as (base, pid):
                asyncio.run(_http(base, scenario))  # warm-up round: imports, connections, SQLite pages
                door: list[Outcome] = []
                reference: list[Outcome] = []
                for i in range(PAIRED):
                    pairs = [(reference, ref_base), (door, base)]
                    for runs, url in pairs if i % 2 == 0 else pairs[::-1]:
                        runs.append(asyncio.run(_http(url, scenario)))
                mid_ref, mid_door = _median(reference), _median(door)
                mid_ref.peak_mb, mid_door.peak_mb = _peak_mb(ref_pid), _peak_mb(pid)
            lines.append(
                mid_ref.row(
                    f"minimal FastAPI endpoint, same kb query (alternated with {workers} worker(s))", None
                )
            )
            lines.append(mid_door.row(f"{scenario.name}, {workers} worker(s)", mid_ref))
    return lines


def _median(runs: list[Outcome]) -> Outcome:
    """The round of median requests/s."""
    ranked = sorted(runs, key=lambda o: len(o.latencies) / o.wall)
    return ranked[len(ranked) // 2]


@contextmanager
def _process(command: list[str], env: dict[str, str], ready: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    proc = subprocess.Popen(
        [part.replace("{port}", str(port)) for part in command],
        env=env,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}{ready}", proc=None)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)


async def _http(base: str, scenario: Scenario) -> Outcome:
    limits = httpx.Limits(max_connections=scenario.concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def call() -> bool:
            response = await client.post(f"{base}{scenario.tool}", json=scenario.payload)
            return response.status_code == 200 and _cites(scenario, response.json())

        return await _timed([call] * scenario.concurrency)


async def _mcp(base: str, scenario: Scenario) -> Outcome:
    from contextlib import AsyncExitStack

    from mcp import Client

    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(f"{base}/mcp")) for _ in range(MCP_SESSIONS)]

        def caller(client: Client) -> Callable[[], Awaitable[bool]]:
            async def call() -> bool:
                result = await client.call_tool(scenario.tool, scenario.payload)
                return not result.is_error and _cites(scenario, result.structured_content or {})

            return call

        return await _timed([caller(clients[i % MCP_SESSIONS]) for i in range(scenario.concurrency)])


def _tree(pid: int) -> list[int]:
    out = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = (task / "children").read_text().split() if (task / "children").exists() else []
        for child in children:
            out += _tree(int(child))
    return out


def _peak_mb(pid: int, field: str = "VmHWM") -> float:
    """``field`` of /proc/PID/status summed over ``pid`` and its children, in MB (VmHWM: the
    peak resident memory; VmRSS: the resident memory now)."""
    total = 0
    for p in _tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _serve(scenario: Scenario, workers: int, env: dict[str, str]) -> Outcome:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [scenario.command, "--port", str(port), "--workers", str(workers)]
    args += ["--http"] if scenario.command == "mcp" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcewise", *args],
        env=env,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(f"{base}/health" if scenario.command == "serve" else f"{base}/mcp", proc=None)
        runner = _http if scenario.command == "serve" else _mcp
        asyncio.run(runner(base, scenario))  # warm-up round: imports, connections, SQLite pages
        outcome = asyncio.run(runner(base, scenario))
        outcome.peak_mb = _peak_mb(proc.pid)
        return outcome
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)


# The provider runs in a process of its own, so that it does not share a GIL with the load.
PROVIDER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
body = open(sys.argv[2], 'rb').read()
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
ThreadingHTTPServer.request_queue_size = 1024
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
"""


class _Provider:
    def __init__(self, url: str) -> None:
        self.url = url


def run() -> str:
    lines = [
        f"{CONCURRENCY} concurrent searches and {ASK_CONCURRENCY} concurrent asks per round (one warm-up "
        "round first); provider: SearXNG JSON served on 127.0.0.1; ratio: requests/s against the library "
        "in-process (`Engine.asearch` for searches, `aask` for asks) and, for /sources/search, against a "
        "minimal FastAPI endpoint doing the same knowledge-base query.",
        "",
        "| door | errors | p50 | p99 | requests/s | ratio to library | peak memory (server) |",
        "|---|---|---|---|---|---|---|",
    ]
    port = free_port()
    fixture = ROOT / "tests" / "fixtures" / "searxng_small.json"
    served = subprocess.Popen([sys.executable, "-c", PROVIDER, str(port), str(fixture)])
    provider = _Provider(f"http://127.0.0.1:{port}")
    try:
        wait_for(f"{provider.url}/sx/search")
        return _rounds(provider, lines)
    finally:
        served.terminate()
        served.wait(10)


def _rounds(provider: _Provider, lines: list[str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        from sourcewise import KnowledgeBase

        KnowledgeBase(state / "kb.sqlite3", semantic=False).index([ROOT / "docs"])
        references: dict[str, Outcome] = {}
        only = os.environ.get("SOURCEWISE_BENCH_DOORS_ONLY")  # e.g. "ask" to run only those rounds
        if not only or only == "sources":
            kb_scenario = next(s for s in SCENARIOS if s.reference == "sources")
            lines += _paired(state, kb_scenario, _door_env(state, provider))
        if only == "sources":
            return _door_rounds(state, provider, references, lines, only)
        asyncio.run(_library(provider, state, CONCURRENCY))  # warm-up
        references["search"] = asyncio.run(_library(provider, state, CONCURRENCY))
        lines.append(references["search"].row(f"library `Engine.asearch` x{CONCURRENCY} (reference)", None))
        asyncio.run(_library_ask(provider, state, ASK_CONCURRENCY))  # warm-up
        references["ask"] = asyncio.run(_library_ask(provider, state, ASK_CONCURRENCY))
        lines.append(references["ask"].row(f"library `aask` x{ASK_CONCURRENCY} (reference for ask)", None))
        return _door_rounds(state, provider, references, lines, only)


def _door_rounds(
    state: Path, provider: _Provider, references: dict[str, Outcome], lines: list[str], only: str | None
) -> str:
    env = _door_env(state, provider)
    for scenario in SCENARIOS:
        if (only and only != scenario.reference) or scenario.reference == "sources":
            continue
        for workers in WORKERS:
            outcome = _serve(scenario, workers, env)
            lines.append(outcome.row(f"{scenario.name}, {workers} worker(s)", references[scenario.reference]))
    return "\n".join(lines)


def _door_env(state: Path, provider: _Provider) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SEARXNG_URL=f"{provider.url}/sx",
        SOURCEWISE_PROVIDERS="searxng",
        SOURCEWISE_STATE_DIR=str(state),
        SOURCEWISE_TIMEOUT="30",
        SOURCEWISE_RATE_LIMIT="0",
        SOURCEWISE_REQUEST_TIMEOUT="120",
    )
    env.pop("SOURCEWISE_API_KEY", None)
    return env
