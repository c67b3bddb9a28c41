"""A source's worker threads (``sources.workers.Workers``): bounded, and ended when idle.

Before, a thread once started lived as long as its source: a server that touched many sources
once kept their threads for good, and tests that built a source per Hypothesis example left
hundreds of threads behind."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from sourcewise.sources.workers import Workers


def _until(check: object, within: float = 30.0) -> bool:
    """Poll ``check()`` until it is true or ``within`` seconds pass (a wait, not a speed check)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


async def test_an_idle_thread_ends_and_a_later_call_starts_one_again() -> None:
    workers = Workers("idle", limit=2, idle_seconds=0.5)
    ran_in = await workers.run(threading.current_thread)
    assert ran_in is not threading.current_thread()
    assert ran_in.name.startswith("sourcewise-idle-")
    assert _until(lambda: workers.threads == 0), "the idle thread never ended"
    assert _until(lambda: not ran_in.is_alive()), "the idle thread never ended"
    assert await workers.run(sum, [1, 2, 3]) == 6
    workers.close()


class _HeldAtRetire(Workers):
    """Holds a timed-out thread just before it decides to retire: the window in which a new call
    may be queued, counting on that thread as idle."""

    def __init__(self) -> None:
        super().__init__("held", limit=1, idle_seconds=0.01)
        self.entered = threading.Event()
        self.go = threading.Event()

    def _retire(self) -> bool:
        self.entered.set()
        self.go.wait(30)
        return super()._retire()


async def test_a_call_queued_as_a_thread_times_out_is_still_run() -> None:
    workers = _HeldAtRetire()
    assert await workers.run(sum, [2, 3]) == 5
    assert await asyncio.to_thread(workers.entered.wait, 30), "the idle thread never timed out"
    call = asyncio.ensure_future(workers.run(sum, [4, 5]))
    await asyncio.sleep(0)  # queued; no new thread: the held one still counts as idle
    assert workers.threads == 1
    workers.go.set()
    assert await asyncio.wait_for(call, timeout=30) == 9
    workers.close()


async def test_no_call_is_stranded_while_threads_retire() -> None:
    """Bursts of calls with gaps about as long as the idle time: threads retire and start again
    between bursts, every call is answered, and no more than ``limit`` threads ever live."""
    workers = Workers("churn", limit=2, idle_seconds=0.002)
    done = 0
    for burst in range(150):
        results = await asyncio.wait_for(
            asyncio.gather(*(workers.run(pow, burst, 2) for _ in range(3))), timeout=30
        )
        done += len(results)
        assert results == [burst**2] * 3
        await asyncio.sleep(0.002 * (burst % 3))
    assert done == 450
    assert workers.threads <= 2
    workers.close()


async def test_close_ends_idle_threads_and_refuses_new_calls() -> None:
    workers = Workers("closing", limit=2)  # the default idle time: only close ends them here
    await asyncio.gather(*(workers.run(time.sleep, 0.01) for _ in range(4)))
    assert workers.threads == 2
    workers.close()
    assert _until(lambda: workers.threads == 0), "close left threads alive"
    with pytest.raises(RuntimeError, match="closed"):
        await workers.run(sum, [1])


def test_idle_seconds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_seconds"):
        Workers("bad", limit=1, idle_seconds=0)
