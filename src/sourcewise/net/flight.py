"""Single flight: one request per key at a time; a caller asking for a key already under way
joins that request instead of sending its own (a page, a site's robots.txt)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["SingleFlight"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """The calls under way, by key (one event loop)."""

    def __init__(self) -> None:
        self._inflight: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, work: Callable[[], Awaitable[V]]) -> V:
        """``work()``'s value, or that of the call for ``key`` already under way. A joiner that is
        cancelled leaves the call running for the others (``shield``); an error reaches them all."""
        if key in self._inflight:
            return await asyncio.shield(self._inflight[key])
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await work()
            future.set_result(value)
            return value
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: joiners re-raise it, nobody else must
            raise
        finally:
            del self._inflight[key]
