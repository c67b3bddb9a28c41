"""Settings are read once per process per config file and environment, and read again on a change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sourcewise.config import clear_settings_cache, load_settings


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.upper().startswith("SOURCEWISE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    clear_settings_cache()


def test_unchanged_file_and_environment_reuse_the_object() -> None:
    first = load_settings()
    assert load_settings() is first


def test_a_changed_environment_variable_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_settings()
    monkeypatch.setenv("SOURCEWISE_TIMEOUT", "7")
    second = load_settings()
    assert second is not first
    assert second.timeout == 7.0
    assert load_settings() is second
    monkeypatch.setenv("SOURCEWISE_TIMEOUT", "8")
    assert load_settings().timeout == 8.0
    monkeypatch.delenv("SOURCEWISE_TIMEOUT")
    assert load_settings().timeout == first.timeout


def test_a_provider_key_variable_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().brave_api_key is None
    monkeypatch.setenv("BRAVE_API_KEY", "k-1")
    key = load_settings().brave_api_key
    assert key is not None
    assert key.get_secret_value() == "k-1"


def test_a_changed_config_file_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.toml"
    path.write_text("timeout = 3\n", "utf-8")
    monkeypatch.setenv("SOURCEWISE_CONFIG", str(path))
    first = load_settings()
    assert first.timeout == 3.0
    assert load_settings() is first
    path.write_text("timeout = 4.5\n", "utf-8")  # another size, and a new modification time
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert load_settings().timeout == 4.5
    path.write_text("timeout = 5.5\n", "utf-8")  # same size: the modification time tells
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))
    assert load_settings().timeout == 5.5


def test_an_explicit_config_file_is_its_own_entry(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("max_results = 3\n", "utf-8")
    b.write_text("max_results = 4\n", "utf-8")
    assert load_settings(a).max_results == 3
    assert load_settings(b).max_results == 4
    assert load_settings(a) is load_settings(a)


def test_the_default_config_file_appearing_is_seen(tmp_path: Path) -> None:
    assert load_settings().max_results == 10
    path = tmp_path / "xdg" / "sourcewise" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("max_results = 6\n", "utf-8")
    assert load_settings().max_results == 6


def test_overrides_are_never_cached() -> None:
    assert load_settings(timeout=2).timeout == 2.0
    assert load_settings().timeout == 10.0
    assert load_settings(timeout=3) is not load_settings(timeout=3)


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from sourcewise import config

    for i in range(3 * config._CACHE_MAX):
        monkeypatch.setenv("SOURCEWISE_MAX_RESULTS", str(1 + i % 50))
        assert load_settings().max_results == 1 + i % 50
    assert len(config._cache) <= config._CACHE_MAX


def test_a_bad_file_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sourcewise import ConfigError

    path = tmp_path / "c.toml"
    path.write_text("timeout = [\n", "utf-8")
    monkeypatch.setenv("SOURCEWISE_CONFIG", str(path))
    with pytest.raises(ConfigError):
        load_settings()
    path.write_text("timeout = 9\n", "utf-8")
    os.utime(path, ns=(3_000_000_000, 3_000_000_000))
    assert load_settings().timeout == 9.0


def test_an_unrelated_variable_keeps_the_object(monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_settings()
    monkeypatch.setenv("SOME_OTHER_TOOL_SETTING", "1")
    assert load_settings() is first
    monkeypatch.delenv("SOME_OTHER_TOOL_SETTING")
    assert load_settings() is first


def test_an_explicit_file_leaves_the_default_answer_alone(tmp_path: Path) -> None:
    default = load_settings()
    path = tmp_path / "a.toml"
    path.write_text("max_results = 3\n", "utf-8")
    assert load_settings(path).max_results == 3
    assert load_settings() is default
    assert load_settings(timeout=4).timeout == 4.0
    assert load_settings() is default


def test_clearing_reads_again() -> None:
    first = load_settings()
    clear_settings_cache()
    second = load_settings()
    assert second is not first
    assert second == first


def test_a_variable_set_through_update_is_seen() -> None:
    """A change by any of os.environ's methods is seen; restored, the first object comes back."""
    first = load_settings()
    os.environ.update({"SOURCEWISE_MAX_RESULTS": "7"})
    try:
        assert load_settings().max_results == 7
    finally:
        del os.environ["SOURCEWISE_MAX_RESULTS"]
    assert load_settings() is first
