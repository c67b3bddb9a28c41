"""Issue 7 item 1 and issue 24 item 1: ratings that cannot be bought with a subdomain or a
redirect, and that hold for any project named in any case, over a data file of tricky URLs
(``tests/data/tricky_tiers.toml``) with the tier each must get."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from sourcewise import rate_source

CASES: list[dict[str, Any]] = tomllib.loads(
    (Path(__file__).parent.parent / "data" / "tricky_tiers.toml").read_text("utf-8")
)["case"]


def test_the_data_file_has_enough_cases() -> None:
    assert len(CASES) >= 100
    assert {c["tier"] for c in CASES} == {1, 2, 3, 4}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['url'][:60]}|{c.get('query', '')}")
def test_tricky_tier(case: dict[str, Any]) -> None:
    rating = rate_source(case["url"], case.get("query"))
    assert rating.tier == case["tier"], f"{case['why']}: {rating.reason}"
