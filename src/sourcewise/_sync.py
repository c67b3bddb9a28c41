"""The one place synchronous wrappers are made, so that their signatures cannot drift.

``sync(afunc)`` returns a function with ``afunc``'s parameters (typed through ``ParamSpec``)
that runs it on a fresh event loop. Resources bound to that loop (shared fetchers) are closed
by the hooks registered with ``on_loop_exit`` before the loop ends.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["on_loop_exit", "run_sync", "sync"]

P = ParamSpec("P")
T = TypeVar("T")
_exit_hooks: list[Callable[[asyncio.AbstractEventLoop], Awaitable[None]]] = []


def on_loop_exit(hook: Callable[[asyncio.AbstractEventLoop], Awaitable[None]]) -> None:
    """Run ``hook(loop)`` at the end of every synchronous call, before its loop closes."""
    if hook not in _exit_hooks:
        _exit_hooks.append(hook)


async def _main(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    finally:
        loop = asyncio.get_running_loop()
        for hook in _exit_hooks:
            await hook(loop)


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
    return asyncio.run(_main(coro))


def sync(afunc: Callable[P, Coroutine[Any, Any, T]], name: str | None = None) -> Callable[P, T]:
    """The synchronous twin of ``afunc``: same parameters, same result, same errors."""

    @functools.wraps(afunc)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(afunc(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = name or afunc.__name__.removeprefix("a")
    wrapper.__doc__ = f"Synchronous ``{afunc.__name__}``: {afunc.__doc__ or ''}".rstrip()
    return wrapper
