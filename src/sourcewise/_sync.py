"""The one place synchronous wrappers are made, so that their signatures cannot drift.

``sync(afunc)`` returns a function with ``afunc``'s parameters (typed through ``ParamSpec``)
that runs it on a fresh event loop. Nothing outlives the call: the resources it used belong to
the ``Session`` it opened (or was given), closed before it returns.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["run_sync", "sync"]

P = ParamSpec("P")
T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` from synchronous code; a clear error inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if running:  # decided outside the except block, so errors are not chained to it
        coro.close()
        raise RuntimeError("called the synchronous API inside an event loop: await the a* variant instead")
    return asyncio.run(coro)


def sync(afunc: Callable[P, Coroutine[Any, Any, T]], name: str | None = None) -> Callable[P, T]:
    """The synchronous twin of ``afunc``: same parameters, same result, same errors."""

    @functools.wraps(afunc)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(afunc(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = name or afunc.__name__.removeprefix("a")
    wrapper.__doc__ = f"Synchronous ``{afunc.__name__}``: {afunc.__doc__ or ''}".rstrip()
    return wrapper
