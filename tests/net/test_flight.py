"""Single flight (``net.flight``): one call per key at a time, joined by the others."""

from __future__ import annotations

import asyncio

import pytest

from sourcewise.net.flight import SingleFlight


async def test_callers_of_one_key_share_one_call_and_other_keys_run_their_own() -> None:
    flights: SingleFlight[str, int] = SingleFlight()
    calls: list[str] = []
    gate = asyncio.Event()

    def work(key: str, value: int):  # type: ignore[no-untyped-def]
        async def run() -> int:
            calls.append(key)
            await gate.wait()
            return value

        return run

    tasks = [asyncio.create_task(flights.run("a", work("a", n))) for n in range(5)]
    other = asyncio.create_task(flights.run("b", work("b", 9)))
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*tasks) == [0] * 5  # every caller gets the first call's value
    assert await other == 9
    assert calls == ["a", "b"]
    assert await flights.run("a", work("a", 7)) == 7  # done: the next call is a new one


async def test_an_error_reaches_every_caller_and_a_cancelled_joiner_leaves_the_call_running() -> None:
    flights: SingleFlight[str, int] = SingleFlight()
    gate = asyncio.Event()

    async def fails() -> int:
        await gate.wait()
        raise ValueError("no")

    leader = asyncio.create_task(flights.run("k", fails))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(flights.run("k", fails))
    quitter = asyncio.create_task(flights.run("k", fails))
    await asyncio.sleep(0)
    quitter.cancel()
    await asyncio.sleep(0)
    gate.set()
    for task in (leader, joiner):
        with pytest.raises(ValueError, match="no"):
            await task
    with pytest.raises(asyncio.CancelledError):
        await quitter
