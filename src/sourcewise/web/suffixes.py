"""The public-suffix list: one per process, built on first use (building it takes ~60 ms)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = ["psl"]


@lru_cache(maxsize=1)
def psl() -> PublicSuffixList:
    """The process's public-suffix list (the copy bundled with ``publicsuffixlist``)."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()
