"""Issue 24 item 6: a result URL without a scheme (``//host/page``) is refused as the README says;
``ref`` and ``source`` stay query parameters (measured: see the test's docstring)."""

from __future__ import annotations

import pytest

from sourcewise import InvalidURL, canonical_url
from sourcewise.models import RawResult
from sourcewise.web.domains import builtin_table
from sourcewise.web.rank import merge_results


@pytest.mark.parametrize(
    "url", ["//react.dev/learn", " //react.dev/learn", "\\\\react.dev\\learn", "///react.dev"]
)
def test_scheme_relative_urls_are_refused(url: str) -> None:
    with pytest.raises(InvalidURL, match="only absolute http"):
        canonical_url(url)


def test_a_scheme_relative_result_is_dropped_and_said() -> None:
    raw = [
        RawResult(title="A", url="//react.dev/learn", provider="p", position=1),
        RawResult(title="B", url="https://react.dev/reference/react", provider="p", position=2),
    ]
    results, dropped = merge_results(raw, "react", builtin_table())
    assert [r.url for r in results] == ["https://react.dev/reference/react"]
    assert any("dropped a p result with an invalid URL" in note for note in dropped)


def test_ref_and_source_track_except_where_they_pick_a_branch() -> None:
    """Issue 24 item 6. The URL suites in ../shared/data/urls (WHATWG, w3lib, url-normalize,
    courlan) hold no URL with either, so they cannot show anything; on real pages (the 181 of
    ../shared/data/extraction/aeb, measured by benchmarks/bench_tracking.py) every link with one
    was a label of where it was clicked, and the keys dropping them merges are one page each. On
    a code host's API they pick a branch: kept there (the fetch cache is keyed by the key too)."""
    assert canonical_url("https://www.newsnation.in/videos?ref=nn-nav") == canonical_url(
        "https://www.newsnation.in/videos"
    )
    assert (
        canonical_url("https://medium.com/p/abc?source=post_page-----abc----") == "https://medium.com/p/abc"
    )
    assert canonical_url("https://example.org/item?id=2&Source=nav") == "https://example.org/item?id=2"
    assert canonical_url("https://api.github.com/repos/o/r/contents/README.md?ref=main") != canonical_url(
        "https://api.github.com/repos/o/r/contents/README.md?ref=dev"
    )
    assert canonical_url(
        "https://gitlab.com/api/v4/projects/1/repository/files/a/raw?ref=v1"
    ) != canonical_url("https://gitlab.com/api/v4/projects/1/repository/files/a/raw?ref=v2")
