"""Issue 24 item 6: a result URL without a scheme (``//host/page``) is refused as the README says;
``ref`` and ``source`` stay query parameters (measured: see the test's docstring)."""

from __future__ import annotations

import logging

import pytest

from sourcewise import InvalidURL, canonical_url
from sourcewise.core.rank import merge_results
from sourcewise.models import RawResult


@pytest.mark.parametrize(
    "url", ["//react.dev/learn", " //react.dev/learn", "\\\\react.dev\\learn", "///react.dev"]
)
def test_scheme_relative_urls_are_refused(url: str) -> None:
    with pytest.raises(InvalidURL, match="only absolute http"):
        canonical_url(url)


def test_a_scheme_relative_result_is_dropped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    raw = [
        RawResult(title="A", url="//react.dev/learn", provider="p", position=1),
        RawResult(title="B", url="https://react.dev/reference/react", provider="p", position=2),
    ]
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        results = merge_results(raw, "react")
    assert [r.url for r in results] == ["https://react.dev/reference/react"]
    assert "dropped a p result with an invalid URL" in caplog.text


def test_ref_and_source_select_pages_so_they_are_kept() -> None:
    """Not tracking parameters. The URL suites in ../shared/data/urls (2,064 URLs: WHATWG, w3lib,
    url-normalize, courlan) hold no URL with either, so they cannot show that dropping them merges
    no distinct pages; and on real sites they do select the page: a branch of a file on GitHub and
    GitLab, the language pair of a translation."""
    assert canonical_url("https://api.github.com/repos/o/r/contents/README.md?ref=main") != canonical_url(
        "https://api.github.com/repos/o/r/contents/README.md?ref=dev"
    )
    assert canonical_url(
        "https://gitlab.com/api/v4/projects/1/repository/files/a/raw?ref=v1"
    ) != canonical_url("https://gitlab.com/api/v4/projects/1/repository/files/a/raw?ref=v2")
    assert "source=en" in canonical_url("https://translate.example/?source=en&target=ko")
