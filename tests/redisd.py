"""A real redis-server on 127.0.0.1 for tests (Debian package ``redis-server``); skip without it."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from doorkit import free_port


@contextmanager
def redis_server() -> Iterator[str]:
    """A throw-away redis-server (no persistence) and its URL."""
    with redis_process() as (url, _proc):
        yield url


@contextmanager
def redis_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A throw-away redis-server, its URL and its process (a test may kill it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    import redis

    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        end = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > end or proc.poll() is not None:
                    raise AssertionError("redis-server did not start") from None
                time.sleep(0.05)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(10)
