"""Config order of strength: defaults < TOML file < SOURCEWISE_* environment < arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcewise import ConfigError, load_settings
from sourcewise.registry import Registry
from sourcewise.web.providers import google
from sourcewise.web.providers.brave import BraveOptions


def test_order_of_strength(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.toml"
    path.write_text('timeout = 4.0\nmax_results = 7\nproviders = ["brave", "duckduckgo"]\n')
    monkeypatch.setenv("SOURCEWISE_CONFIG", str(path))
    assert load_settings().timeout == 4.0
    assert load_settings().providers == ["brave", "duckduckgo"]
    monkeypatch.setenv("SOURCEWISE_TIMEOUT", "6")
    monkeypatch.setenv("SOURCEWISE_PROVIDERS", "searxng, duckduckgo")
    settings = load_settings()
    assert settings.timeout == 6.0
    assert settings.providers == ["searxng", "duckduckgo"]
    assert settings.max_results == 7  # still from the file
    assert load_settings(timeout=8).timeout == 8.0


def test_default_file_location(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "sourcewise"  # XDG_CONFIG_HOME is tmp_path/config in tests
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('max_results = 3\n[tiers]\n"wiki.corp.example" = 1\n')
    settings = load_settings()
    assert settings.max_results == 3
    assert settings.tiers == {"wiki.corp.example": 1}


def test_keys_from_their_usual_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "b-key")
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9/")
    registry = Registry.load(load_settings())
    brave = registry.options_for("brave")
    assert isinstance(brave, BraveOptions)
    assert brave.api_key is not None
    assert brave.api_key.get_secret_value() == "b-key"
    assert getattr(registry.options_for("searxng"), "url", None) == "http://127.0.0.1:9/"
    assert "b-key" not in repr(registry)
    assert "b-key" not in str(brave.model_dump())


def test_provider_keys_from_their_own_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "from-env")
    path = tmp_path / "c.toml"
    path.write_text(
        '[providers.brave]\napi_key = "from-file"\nurl = "http://127.0.0.1:9/b"\n'
        '[providers.google]\napi_key = "g"\ncse_id = "cx"\n',
        "utf-8",
    )
    registry = Registry.load(load_settings(path))
    brave = registry.options_for("brave")
    assert isinstance(brave, BraveOptions)
    assert brave.api_key is not None
    assert brave.api_key.get_secret_value() == "from-file"  # the section beats the variable
    assert brave.url == "http://127.0.0.1:9/b"
    assert "engine cx" in google.configured(registry.options_for("google"))[1]
    assert not hasattr(load_settings(path), "brave_api_key")  # one place for a key


def test_a_bad_provider_option_names_the_provider_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[providers.tavily]\napi_kee = "t"\n', "utf-8")
    with pytest.raises(ConfigError, match=r"provider 'tavily' \(\[providers.tavily\]\): api_kee"):
        load_settings(path)
    with pytest.raises(ConfigError, match="brave_api_key"):
        load_settings(brave_api_key="k")  # the old top-level key is gone, not silently ignored


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("timeout = -1", "timeout"),
        ("max_results = 80", "max_results"),
        ("nonsense = 1", "nonsense"),
        ('[tiers]\n"x.example" = 9', "tiers must be 1-4"),
        ("= broken", "not valid TOML"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_missing_explicit_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
