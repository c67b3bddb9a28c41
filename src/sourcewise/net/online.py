"""Is this machine offline? One cheap check, said once instead of one failure per provider.

``no_route()`` asks the kernel for a route to a public address on each family (a UDP "connect",
which sends no packet): no route on either family means no web provider can be reached, so the
search engine stops retrying and says "no network" once. The answer is kept for ``TTL`` seconds.
A machine with a route but no working DNS shows as each provider's connection failure.
"""

from __future__ import annotations

import socket
import threading
import time

__all__ = ["TTL", "no_route"]

TTL = 30.0
# Documentation-free public addresses (a resolver's), only ever used for a route lookup.
PROBES = ((socket.AF_INET, ("1.1.1.1", 53)), (socket.AF_INET6, ("2606:4700:4700::1111", 53)))
_cache: dict[str, tuple[float, bool]] = {}
_lock = threading.Lock()


def _routed(family: socket.AddressFamily, address: tuple[str, int]) -> bool:
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect(address)  # UDP: picks a route and a source address, sends nothing
            return True
    except OSError:
        return False


def no_route(clock: float | None = None) -> bool:
    """True when the kernel has no route to the internet on IPv4 nor IPv6 (checked once per TTL)."""
    now = time.monotonic() if clock is None else clock
    with _lock:
        seen = _cache.get("offline")
        if seen is not None and now - seen[0] < TTL:
            return seen[1]
    offline = not any(_routed(family, address) for family, address in PROBES)
    with _lock:
        _cache["offline"] = (now, offline)
    return offline
