"""The one registry, driven with hostile input: every source spec and every providers table is a
source, valid settings, or a typed error; every built-in syntax renders any plan."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise import ConfigError, InvalidOption, InvalidQuery, SourceUnavailable, load_settings
from sourcewise.config import Settings
from sourcewise.planning import syntax
from sourcewise.planning.planner import render as render_plan
from sourcewise.planning.routing import plan
from sourcewise.registry import Registry, discover_sources

SPEC = st.one_of(
    st.text(max_size=200),
    st.builds(
        lambda t, p: f"{t}:{p}", st.sampled_from(["kb", "code", "web", "nope", ""]), st.text(max_size=50)
    ),
)


@settings(deadline=None)
@given(SPEC)
def test_any_source_spec_is_a_source_or_a_typed_error(spec: str) -> None:
    base = Settings()
    try:
        source = Registry.load(base).source(spec, base)
    except (InvalidOption, ConfigError, SourceUnavailable):
        return
    assert source.name == spec.strip()
    assert source.kind in discover_sources()[1]


TABLE = st.dictionaries(
    st.text(max_size=12),
    st.one_of(
        st.text(max_size=12),
        st.lists(st.text(max_size=12), max_size=3),
        st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=8)), max_size=3),
    ),
    max_size=4,
)


@settings(deadline=None)
@given(TABLE)
def test_a_providers_table_is_settings_or_a_config_error(table: dict[str, object]) -> None:
    try:
        got = load_settings(providers=table)
    except ConfigError:
        return
    assert all(name in Registry.load(got).providers for name in got.providers)


@settings(deadline=None)
@given(st.text(min_size=3, max_size=300))
def test_every_built_in_syntax_renders_any_plan(question: str) -> None:
    try:
        made = plan(
            question, sources=["chat", "knowledge_base"], today=date(2026, 11, 25), settings=Settings()
        )
    except (InvalidQuery, InvalidOption):
        return
    for render in (syntax.plain, syntax.chat, syntax.email, syntax.knowledge_base, syntax.project_tracker):
        queries = render_plan(made, "knowledge_base", render)
        assert queries
        assert queries[0].mode == "keyword" or len(queries) == 1
