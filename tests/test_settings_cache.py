"""Settings are read at the edge, afresh each time: nothing keeps them between calls, so a change
of the environment or of the config file is seen by the next reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from sourcewise.config import load_settings
from sourcewise.registry import Registry
from sourcewise.web.providers.brave import BraveOptions


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.upper().startswith("SOURCEWISE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_each_read_is_a_new_object_equal_to_the_last() -> None:
    first = load_settings()
    second = load_settings()
    assert second is not first
    assert second == first


def test_a_changed_environment_variable_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_settings()
    monkeypatch.setenv("SOURCEWISE_TIMEOUT", "7")
    assert load_settings().timeout == 7.0
    monkeypatch.delenv("SOURCEWISE_TIMEOUT")
    assert load_settings().timeout == first.timeout


def test_a_provider_key_variable_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    def key() -> SecretStr | None:
        options = Registry.load(load_settings()).options_for("brave")
        assert isinstance(options, BraveOptions)
        return options.api_key

    assert key() is None
    monkeypatch.setenv("BRAVE_API_KEY", "k-1")
    found = key()
    assert found is not None
    assert found.get_secret_value() == "k-1"


def test_a_changed_config_file_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.toml"
    path.write_text("timeout = 3\n", "utf-8")
    monkeypatch.setenv("SOURCEWISE_CONFIG", str(path))
    assert load_settings().timeout == 3.0
    path.write_text("timeout = 5.5\n", "utf-8")
    assert load_settings().timeout == 5.5


def test_the_default_config_file_appearing_is_seen(tmp_path: Path) -> None:
    assert load_settings().max_results == 10
    path = tmp_path / "xdg" / "sourcewise" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("max_results = 6\n", "utf-8")
    assert load_settings().max_results == 6


def test_a_bad_file_then_a_good_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sourcewise import ConfigError

    path = tmp_path / "c.toml"
    path.write_text("timeout = [\n", "utf-8")
    monkeypatch.setenv("SOURCEWISE_CONFIG", str(path))
    with pytest.raises(ConfigError):
        load_settings()
    path.write_text("timeout = 9\n", "utf-8")
    assert load_settings().timeout == 9.0


def test_no_module_of_the_config_keeps_settings() -> None:
    from sourcewise import config

    load_settings()
    kept = [name for name, value in vars(config).items() if isinstance(value, config.Settings)]
    assert kept == []
