"""``effort``: how hard ``ask`` tries, one setting for every door (library, CLI, MCP, HTTP).

One level sets together what Perplexica's modes do: hits wanted per source, refinement cycles
after the first pass, the fetch depth (result pages read in full) and each source's time budget.
Its description for people (``help``) is written from the table, so that no door says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["EFFORTS", "Effort", "EffortLevel", "effort_help"]

EffortLevel = Literal["quick", "balanced", "thorough"]


@dataclass(frozen=True)
class Effort:
    """Hits wanted per source, refinement cycles after the first pass, the fetch depth (result
    pages read in full, ``Source.read``: the web's) and each source's time budget (seconds,
    bounded by ``source_timeout``; the page reads come out of it)."""

    limit: int
    cycles: int
    pages: int = 0
    at_most: float = 300.0
    at_least: float = 0.0

    def deadline(self, configured: float) -> float:
        return min(max(configured, self.at_least), self.at_most)

    def describe(self) -> str:
        cycles = "one pass" if self.cycles <= 1 else f"up to {self.cycles} cycles"
        pages = f"{self.pages} result pages read" if self.pages else "no pages read"
        if self.at_most < 300:
            budget = f"at most {self.at_most:g} s a source"
        elif self.at_least > 0:
            budget = f"at least {self.at_least:g} s a source"
        else:
            budget = "source_timeout seconds a source"
        return f"{self.limit} hits a source, {cycles}, {pages}, {budget}"


EFFORTS: dict[str, Effort] = {
    "quick": Effort(limit=5, cycles=1, at_most=5.0),  # one pass, snippets only, a short wait
    "balanced": Effort(limit=10, cycles=3, pages=2),  # the default: source_timeout as configured
    "thorough": Effort(limit=20, cycles=5, pages=5, at_least=30.0),  # more of each, a longer wait
}


def effort_help() -> str:
    """Every level and what it sets, for ``--help``, the MCP tool and the HTTP schema."""
    return "; ".join(
        f"{name}{' (default)' if name == 'balanced' else ''}: {level.describe()}"
        for name, level in EFFORTS.items()
    )
