"""A child process's work for the cross-process suspension test, in a module of its own so that a
spawned child imports only the provider state, not the whole test module."""

from __future__ import annotations

from pathlib import Path

from sourcewise.net.state import ProviderState


def strike(path: str, count: int) -> None:
    """Suspend provider ``p`` ``count`` times in the state file at ``path``."""
    state = ProviderState(Path(path))
    for _ in range(count):
        state.suspend("p", 0.0, "429", base=1)
    state.close()
