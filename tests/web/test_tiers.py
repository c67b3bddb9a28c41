"""rate_source: the seed's tier rules, the curated table, bands, query awareness, config."""

from __future__ import annotations

import pytest

from sourcewise import InvalidURL, load_settings, rate_source
from sourcewise.web.domains import builtin_table, default_table
from sourcewise.web.rating import rate
from sourcewise.web.tiers import BANDS

BUILTIN = builtin_table()


@pytest.mark.parametrize(
    ("url", "tier"),
    [
        # seed 000's examples
        ("https://react.dev/reference/react", 1),
        ("https://nodejs.org/api/fs.html", 1),
        ("https://docs.python.org/3/library/asyncio.html", 1),
        ("https://blog.reactjs.org/2020/08/10/react-v17-rc.html", 2),
        ("https://vercel.com/guides/deploying-react-with-vercel", 2),
        ("https://stackoverflow.com/questions/1/x", 3),
        ("https://www.reddit.com/r/reactjs/comments/x", 3),
        ("https://dev.to/someone/post", 3),
        ("https://medium.com/@someone/post", 4),
        ("https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md", 1),
        # rules beyond the table
        ("https://docs.some-unknown-tool.io/start", 4),  # docs.* alone vouches for nothing (issue 7)
        ("https://someproject.readthedocs.io/en/latest/", 3),  # a Read the Docs project, not known
        ("https://github.com/randomuser/toy-project", 3),  # GitHub, but not an official org
        ("https://www.nasa.gov/missions", 2),  # government
        ("https://www.snu.ac.kr/research", 2),  # Korean academic
        ("https://forum.someapp.example/t/123", 3),
        ("https://johndoe.blogspot.com/2024/01/x.html", 4),
        ("https://unknown-site.example/article", 4),
        # Korean and Japanese platforms
        ("https://velog.io/@dev/react-hooks", 4),
        ("https://someone.tistory.com/42", 4),
        ("https://qiita.com/user/items/abc", 3),
        ("https://zenn.dev/user/articles/abc", 3),
        ("https://okky.kr/articles/123", 3),
        ("https://techblog.woowahan.com/1234/", 2),
        ("https://note.com/someone/n/abc", 4),
    ],
)
def test_tiers(url: str, tier: int) -> None:
    rating = rate(url, None, BUILTIN)
    assert rating.tier == tier, rating.reason


def test_score_bands_hold_for_every_rating() -> None:
    urls = [
        "https://react.dev/",
        "https://blog.reactjs.org/",
        "https://stackoverflow.com/q/1",
        "https://medium.com/x",
        "https://unknown.example/",
        "https://docs.x.io/",
        "https://nih.gov/",
    ]
    for url in urls:
        for query in (None, "react hooks", "파이썬 비동기", "k8s ingress"):
            rating = rate(url, query, BUILTIN)
            low, high = BANDS[rating.tier]
            assert low <= rating.reliability_score <= high, (url, query, rating)
            assert rating.reason


def test_official_for_the_query_scores_highest() -> None:
    on_topic = rate("https://react.dev/reference/react/useState", "React useState hook", BUILTIN)
    off_topic = rate("https://docs.python.org/3/library/asyncio.html", "React useState hook", BUILTIN)
    assert on_topic.tier == off_topic.tier == 1
    assert on_topic.reliability_score > off_topic.reliability_score
    assert "react" in on_topic.reason


def test_aliases_and_korean_particles_name_the_project() -> None:
    plain = rate("https://kubernetes.io/docs/concepts/", None, BUILTIN).reliability_score
    assert (
        rate("https://kubernetes.io/docs/concepts/", "k8s ingress setup", BUILTIN).reliability_score > plain
    )
    assert (
        rate("https://kubernetes.io/docs/concepts/", "쿠버네티스의 인그레스", BUILTIN).reliability_score
        > plain
    )


def test_domain_named_in_query_is_official() -> None:
    rating = rate("https://www.brandnewlib.dev/guide", "BrandNewLib configuration", BUILTIN)
    assert rating.tier == 1
    assert "brandnewlib" in rating.reason


def test_more_specific_entry_wins() -> None:
    assert rate("https://kubernetes.io/blog/2024/x", None, BUILTIN).tier == 2
    assert rate("https://kubernetes.io/docs/x", None, BUILTIN).tier == 1
    assert rate("https://github.com/facebook/react/issues/1", None, BUILTIN).tier == 1
    assert rate("https://github.com/facebook/react-native-not-really", None, BUILTIN).tier == 3


def test_config_extends_the_table() -> None:
    settings = load_settings(
        tiers={"wiki.mycorp.example": 1, "medium.com": 3}, official={"acme": ["acme.example"]}
    )
    assert rate_source("https://wiki.mycorp.example/page", settings=settings).tier == 1
    assert rate_source("https://medium.com/x", settings=settings).tier == 3
    acme = rate_source("https://acme.example/docs/start", "acme widgets", settings=settings)
    assert acme.tier == 1
    assert "acme" in acme.reason


def test_table_is_large_and_covers_korean_and_japanese() -> None:
    table = default_table()
    projects = set(table.names.values())
    assert len(projects) >= 250
    for host in ("velog.io", "qiita.com", "zenn.dev", "note.com", "tistory.com", "okky.kr"):
        assert table.lookup(host, "/") is not None, host


def test_invalid_url_is_typed() -> None:
    with pytest.raises(InvalidURL):
        rate_source("not a url")


def test_table_for_a_config_is_built_once() -> None:
    from sourcewise.web.domains import builtin_table, table_for

    assert table_for({}, {}) is builtin_table()
    assert table_for({"acme": ["acme.example"]}, {"x.example": 2}) is table_for(
        {"acme": ["acme.example"]}, {"x.example": 2}
    )
