"""One deadline for a whole operation (a search, a provider call, a page fetch), retries and
back-off included: seed 000's 10 s timeout is what the user waits, not the time of each try.

Every try gets what is left of the deadline, and a retry happens only if it fits: after its
back-off at least ``MIN_TRY`` seconds (or half the deadline, if shorter) must be left, else the
failure is reported at once. Time is read from a monotonic clock (injectable for tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["MIN_TRY", "Deadline"]

MIN_TRY = 1.0  # seconds a retry needs after its back-off to be worth making


class Deadline:
    """``seconds`` from now on ``clock`` (default: ``time.monotonic``)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.until = clock() + seconds

    def left(self) -> float:
        """Seconds left, never below zero."""
        return max(0.0, self.until - self.clock())

    def passed(self) -> bool:
        """Whether the deadline has passed: less than a hundredth of a second left is no time for
        a try (tries are timed in hundredths: "no answer within 0 s" would say nothing)."""
        return self.left() < 0.01

    def fits(self, wait: float) -> bool:
        """Whether a retry after waiting ``wait`` seconds still has time for a try."""
        return self.left() - wait >= min(MIN_TRY, self.seconds / 2)

    def why_not(self, wait: float) -> str:
        """Why a retry after ``wait`` seconds is not made (for the log and the report)."""
        return (
            f"not retried: a retry in {wait:.1f} s would not fit in what is left of the "
            f"{self.seconds:g} s deadline ({self.left():.1f} s)"
        )
