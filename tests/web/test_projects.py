"""Issue 24 item 1: a project the query names is recognised whatever its case and in its usual
spellings, and its own domains, GitHub organisation and Pages are official for it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise import rate_source
from sourcewise.web.domains import builtin_table
from sourcewise.web.projects import candidate_words, named_by, spellings
from sourcewise.web.tiers import wanted_projects


@pytest.mark.parametrize("query", ["ZeroMQ sockets", "zeromq sockets", "ZEROMQ sockets", "0MQ sockets"])
def test_the_spelling_and_case_of_a_name_do_not_change_the_rating(query: str) -> None:
    rating = rate_source("https://zeromq.org/socket-api/", query)
    assert (rating.tier, rating.reliability_score) == (1, 96), rating.reason


def test_korean_and_english_names_of_a_known_project_rate_alike() -> None:
    korean = rate_source("https://react.dev/learn", "리액트 훅")
    english = rate_source("https://react.dev/learn", "React hooks")
    assert korean == english
    assert korean.tier == 1


def test_spellings() -> None:
    assert spellings("0MQ") == {"0mq", "zeromq"}
    assert spellings("Socket.IO") == {"socketio"}
    assert spellings("리액트") == frozenset()  # not a domain label: only table aliases name it


def test_candidate_words_leave_out_what_names_no_project() -> None:
    assert candidate_words(["how", "to", "use", "zeromq", "tutorial", "0mq", "42", "zeromq"]) == [
        "zeromq",
        "0mq",
    ]


def test_a_label_is_named_after_a_project_with_usual_affixes_only() -> None:
    wanted = {"tornado": "tornado"}
    assert named_by("tornadoweb", wanted) == "tornado"
    assert named_by("python-tornado", wanted) == "tornado"
    assert named_by("tornado-guide", wanted) is None
    assert named_by("mytornado", wanted) is None


def test_wanted_projects_keep_the_table_and_add_other_words() -> None:
    wanted = wanted_projects(builtin_table(), "React Native with zeromq")
    assert wanted == {"react native": "react native", "react": "react", "zeromq": "zeromq"}


@given(st.text(max_size=200))
def test_hostile_words_never_break_the_name_rules(text: str) -> None:
    words = text.split()
    found = candidate_words(words)
    assert all(w.isascii() and len(w) >= 3 for w in found)
    for word in words:
        assert all(s.isascii() for s in spellings(word))
        named_by(word, {w: w for w in found})
    wanted_projects(builtin_table(), text)


def test_a_forum_on_the_projects_own_site_is_not_cached_as_its_docs() -> None:
    """The rating memo keys pages of one host by what a rating reads of the path: a forum path on
    the site of a project the table does not list must not share the entry of its docs."""
    docs = rate_source("https://zeromq.org/socket-api/", "zeromq sockets")
    forum = rate_source("https://zeromq.org/forums/socket-api/", "zeromq sockets")
    assert (docs.tier, forum.tier) == (1, 3), (docs.reason, forum.reason)


def test_other_spellings_name_a_project_the_table_does_not_list() -> None:
    assert candidate_words(["ØMQ", "guide"]) == ["0mq"]  # a slashed zero is a zero
    assert wanted_projects(builtin_table(), "zmq sockets") == {"zeromq": "zmq", "sockets": "sockets"}
    assert "zmq" not in builtin_table().names  # it does not make zeromq a listed project
