"""Which file an import names: module and path parts, for the refinement loop's import graph.

``sources/code/outline.py`` reads what a file imports (``app.middleware.throttle``, ``./throttle``,
``.throttle``); these helpers tell which of the files found so far such a module may be, so a file
imported by a relevant file is seen as related. Pure and linear, no regular expressions.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["module_parts", "path_parts", "resolves_to"]

INDEX_STEMS = frozenset({"__init__", "index", "mod", "main", "lib"})
SUFFIX_SEP = "."


def module_parts(module: str) -> list[str]:
    """``app.middleware.throttle`` / ``../middleware/throttle`` / ``crate::a::b`` -> name parts."""
    cleaned = module.replace("::", "/").replace("\\", "/")
    sep = "/" if "/" in cleaned else "."
    return [p for p in cleaned.split(sep) if p and p not in (".", "..", "@", "crate", "self", "super")]


def path_parts(path: str) -> list[str]:
    """``src/app/middleware/throttle.py`` -> ``["src", "app", "middleware", "throttle"]``
    (``__init__``/``index`` files stand for their folder)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if parts:
        stem = parts[-1].split(SUFFIX_SEP)[0]
        parts[-1] = stem
        if stem in INDEX_STEMS and len(parts) > 1:
            parts.pop()
    return parts


def resolves_to(module: str, paths: Iterable[str]) -> list[str]:
    """The paths ``module`` may name: the path's parts end with the module's parts."""
    want = module_parts(module)
    if not want:
        return []
    out: list[str] = []
    for path in paths:
        have = path_parts(path)
        n = min(len(want), len(have))
        if n and have[-n:] == want[-n:] and (n == len(want) or n >= 2 or len(want) == 1):
            out.append(path)
    return out
