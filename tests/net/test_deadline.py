"""Issue 24: one deadline per operation, retries included; the arithmetic, with an injected clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.net.deadline import MIN_TRY, Deadline


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_retry_happens_only_if_it_fits() -> None:
    clock = Clock()
    deadline = Deadline(10.0, clock)
    assert deadline.left() == 10.0
    assert deadline.fits(1.0)  # a quick failure: 9 s are left after the back-off
    clock.now += 8.5  # a slow failure
    assert deadline.left() == 1.5
    assert not deadline.fits(1.0)  # 0.5 s would be left: less than a try needs
    assert "1.0 s would not fit" in deadline.why_not(1.0)
    clock.now += 5
    assert deadline.left() == 0.0  # never negative


def test_a_short_deadline_needs_half_of_itself_for_a_retry() -> None:
    clock = Clock()
    deadline = Deadline(0.5, clock)
    assert deadline.fits(0.2)
    assert not deadline.fits(0.3)


@given(st.floats(0.01, 600), st.floats(0, 700), st.floats(0, 700))
def test_a_retry_that_fits_leaves_time_for_a_try_and_ends_before_the_deadline(
    seconds: float, spent: float, wait: float
) -> None:
    clock = Clock()
    deadline = Deadline(seconds, clock)
    clock.now += spent
    if deadline.fits(wait):
        assert spent + wait + min(MIN_TRY, seconds / 2) <= seconds + 1e-9
    assert 0.0 <= deadline.left() <= seconds + 1e-9


def test_less_than_a_hundredth_of_a_second_left_is_a_passed_deadline() -> None:
    """Tries are timed in hundredths: a provider reached with 0.004 s left is not asked "within 0 s"."""
    clock = Clock()
    deadline = Deadline(1.0, clock)
    assert not deadline.passed()
    clock.now += 0.996
    assert deadline.passed()
    assert deadline.left() > 0
