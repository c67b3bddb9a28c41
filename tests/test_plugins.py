"""Plug-ins the core has never heard of (``tests/plugin_examples.py``), registered through entry
points as a third-party package would be: a source of a new kind with its own syntax, options
and authority, and a provider with its own key option. Each is configured, validated, planned
for, searched by ``ask`` and listed, without a file under src/ naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import sourcewise
from sourcewise import ConfigError, NoProviderAvailable, Session, load_settings
from sourcewise._sync import run_sync
from sourcewise.registry import forget_plugins
from sourcewise.web.api import aprovider_status

from clirun import run_cli
from plugin_examples import install_plugins
from servers import LocalServer, Reply

SRC = Path(__file__).parent.parent / "src"
RECIPES = [
    {"title": "Kimchi stew", "cook": "minji", "cuisine": "korean",
     "text": "Kimchi stew: simmer aged kimchi with pork belly and tofu for twenty minutes."},
    {"title": "Soybean paste stew", "cook": "joon", "cuisine": "korean",
     "text": "Soybean paste stew: boil anchovy stock, add paste, zucchini and tofu."},
    {"title": "Risotto", "cook": "minji", "cuisine": "italian",
     "text": "Risotto: toast the rice, then add stock a ladle at a time while stirring."},
]  # fmt: skip
ACME_ANSWER = {
    "hits": [
        {"url": "https://www.maangchi.com/recipe/kimchi-jjigae", "title": "Kimchi jjigae",
         "summary": "Kimchi stew recipe with pork belly and tofu, simmered until tender."},
    ]
}  # fmt: skip


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The two plug-ins installed as a package's entry points would be (a dist-info on sys.path)."""
    install_plugins(
        tmp_path, monkeypatch,
        "[sourcewise.sources]\nrecipes = plugin_examples:RecipeSource\n\n"
        "[sourcewise.providers]\nacme = plugin_examples:PROVIDER\n",
    )  # fmt: skip
    monkeypatch.delenv("ACME_API_KEY", raising=False)
    box = tmp_path / "recipes.json"
    box.write_text(json.dumps(RECIPES), "utf-8")
    yield box
    forget_plugins()  # uninstalled again: later tests discover without them


def _config(tmp_path: Path, box: Path, url: str, extra_provider: str = "", extra_source: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f"""plugins = ["recipes", "acme"]
state_dir = "{tmp_path / "state"}"
allow_private = true

[providers]
chain = ["acme"]

[providers.acme]
url = "{url}"
{extra_provider}

[sources.kitchen]
type = "recipes"
path = "{box}"
cuisine = "korean"
{extra_source}
""",
        "utf-8",
    )
    return path


def test_nothing_under_src_names_the_plug_ins() -> None:
    files = list(SRC.rglob("*.py"))
    assert len(files) > 50
    for name in ("recipe_box", "RecipeSource", "recipe_card", "ACME_API_KEY", "plugin_examples"):
        assert not [f for f in files if name in f.read_text("utf-8")], name


async def test_a_new_source_kind_and_a_keyed_provider_through_ask(
    plugins: Path, server: LocalServer, tmp_path: Path
) -> None:
    server.route("/acme", Reply(200, json.dumps(ACME_ANSWER), content_type="application/json"))
    settings = load_settings(
        _config(tmp_path, plugins, f"{server.url}/acme", extra_provider='api_key = "acme-secret"')
    )
    question = "How do I make kimchi stew from:minji"

    # Planned for, in the source's own syntax (cook=, not from:), by kind.
    plan = sourcewise.plan(question, sources=["recipe_box", "chat"], settings=settings)
    mine = [q.query for q in plan.sources if q.source == "recipe_box"]
    assert mine == ["kimchi stew cook=minji"], plan.sources
    assert any("from:minji" in q.query for q in plan.sources if q.source == "chat")

    async with Session(settings) as session:
        answer = await sourcewise.aask(question, sources=["kitchen", "web"], session=session)
        public = await sourcewise.aask("How do I make kimchi stew", sources=["web"], session=session)
        listed = await sourcewise.asource_info(session=session)
    reports = {r.source: r for r in answer.reports}
    assert reports["kitchen"].status == "ok", reports
    assert reports["kitchen"].queries[0] == "kimchi stew cook=minji"
    # a from: filter makes it a question about the asker's own people, but the web was named: searched
    assert reports["web"].status == "ok", reports
    assert any("as asked" in w for w in answer.warnings), answer.warnings
    assert [(r.source, r.status) for r in public.reports] == [("web", "ok")], public.reports
    # The provider got its own key from [providers.acme].
    sent = [s for s in server.seen if s.path == "/acme"]
    assert sent
    headers = {k.lower(): v for k, v in sent[0].headers.items()}
    assert headers["authorization"] == "Bearer acme-secret"
    assert answer.sources, answer.text
    kitchen = [h for h in answer.hits if h.hit.source == "kitchen"]
    assert [h.hit.title for h in kitchen] == ["Kimchi stew"]  # the cuisine and cook filters held
    factor = next(f for f in kitchen[0].factors if f.name == "authority")
    assert factor.value == 1.0, factor.note  # its declared level for this query type
    assert "recipe_card" in factor.note
    assert ("kitchen", "recipes", "recipe_box") in {(i.name, i.type, i.kind) for i in listed}


def test_sources_lists_the_new_kind(plugins: Path, server: LocalServer, tmp_path: Path) -> None:
    config = _config(tmp_path, plugins, f"{server.url}/acme", extra_provider='api_key = "k"')
    result = run_cli(["sources", "--config", str(config)])
    assert result.returncode == 0, result.stderr
    assert "kitchen (recipes, recipe box)" in result.stdout


async def test_a_missing_key_names_the_providers_own_variable(
    plugins: Path, server: LocalServer, tmp_path: Path
) -> None:
    settings = load_settings(_config(tmp_path, plugins, f"{server.url}/acme"))
    status = {s.name: s for s in await aprovider_status(settings)}
    assert not status["acme"].configured
    assert "ACME_API_KEY" in status["acme"].detail
    with pytest.raises(NoProviderAvailable, match="ACME_API_KEY"):
        await sourcewise.asearch("kimchi stew", settings=settings)


def test_the_usual_variable_gives_the_key(
    plugins: Path, server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "from-env")
    settings = load_settings(_config(tmp_path, plugins, f"{server.url}/acme"))
    status = {s.name: s for s in sourcewise.provider_status(settings)}
    assert status["acme"].configured


@pytest.mark.parametrize(
    ("provider", "source", "message"),
    [
        ("colour = 'red'", "", r"provider 'acme' \(\[providers.acme\]\): colour: Extra inputs"),
        ("", "spice = 3", r"source 'kitchen' \(recipes\): spice: Extra inputs"),
    ],
)
def test_options_are_validated_by_the_plug_ins_own_model(
    plugins: Path, server: LocalServer, tmp_path: Path, provider: str, source: str, message: str
) -> None:
    config = _config(tmp_path, plugins, f"{server.url}/acme", extra_provider=provider, extra_source=source)
    with pytest.raises(ConfigError, match=message):
        _open_kitchen(config)


def _open_kitchen(config: Path) -> None:
    """A provider's options fail as the session opens, a source's when it is first used."""
    session = Session(load_settings(config))
    try:
        session.source("kitchen")
    finally:
        run_sync(session.aclose())


def test_the_allowlist_covers_providers_and_sources(
    plugins: Path, server: LocalServer, tmp_path: Path
) -> None:
    config = _config(tmp_path, plugins, f"{server.url}/acme")
    text = config.read_text("utf-8").replace('plugins = ["recipes", "acme"]', 'plugins = ["recipes"]')
    config.write_text(text, "utf-8")
    with pytest.raises(ConfigError, match="acme"):  # not allowed: neither in the chain nor configurable
        load_settings(config)
