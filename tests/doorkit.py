"""Helpers for the door tests: real servers (uvicorn, ``sourcewise serve`` / ``mcp``) on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from starlette.types import ASGIApp

from servers import LocalServer, Reply

FIXTURES = Path(__file__).parent / "fixtures"
SMALL = (FIXTURES / "searxng_small.json").read_text("utf-8")
JSON = "application/json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def provider_env(server: LocalServer, state_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a server process whose only provider is the SearXNG on ``server``."""
    server.route("/sx/search", Reply(200, SMALL, content_type=JSON))
    env = dict(os.environ)
    env.update(
        SEARXNG_URL=f"{server.url}/sx",
        SOURCEWISE_PROVIDERS="searxng",
        SOURCEWISE_STATE_DIR=str(state_dir),
        SOURCEWISE_TIMEOUT="5",
        **extra,
    )
    return env


def wait_for(url: str, deadline: float = 90.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Until ``url`` answers at all (any status), or fail with the process's stderr."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(
                f"server exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''!r}"
            )
        try:
            # Headers are enough: GET /mcp answers with an event stream that stays open.
            with httpx.stream("GET", url, timeout=2.0):
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer within {deadline} s")


@contextmanager
def spawn(args: list[str], env: Mapping[str, str], ready: str) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m sourcewise ARGS`` as a child process, until it answers at ``ready``."""
    with spawn_all([(args, env, ready)]) as (proc,):
        yield proc


@contextmanager
def spawn_all(
    servers: Sequence[tuple[list[str], Mapping[str, str], str]],
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Each ``(ARGS, env, ready)`` as ``python -m sourcewise ARGS``, all started before any is waited
    for (each start is seconds of imports), until every one answers at its ``ready``."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for args, env, _ in servers:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "sourcewise", *args],
                    env=dict(env),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,  # workers share its group: one signal stops them all
                )
            )
        for proc, (_, _, ready) in zip(procs, servers, strict=True):
            wait_for(ready, proc=proc)
        yield procs
    finally:
        for proc in procs:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    if proc.stderr:
        proc.stderr.close()


@contextmanager
def uvicorn_thread(app: ASGIApp) -> Iterator[str]:
    """A real uvicorn server for ``app`` on 127.0.0.1 in a thread of this process; its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        end = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > end or not thread.is_alive():
                raise AssertionError("uvicorn did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
