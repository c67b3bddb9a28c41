"""Settings: defaults < TOML file < ``SOURCEWISE_*`` environment < arguments.

The TOML file is ``$SOURCEWISE_CONFIG`` if set, else ``$XDG_CONFIG_HOME/sourcewise/config.toml``
(``~/.config/sourcewise/config.toml``). Each provider's options (its key, URL ...) are not
settings: they are ``[providers.NAME]`` sections, validated by the provider's own options model,
which also reads the usual variables (``BRAVE_API_KEY``, ``TAVILY_API_KEY``, ``GOOGLE_CSE_KEY``,
``GOOGLE_CSE_ID``, ``SEARXNG_URL``). Keys are ``SecretStr``: they never appear in a repr, a log
line or an error message.
"""

from __future__ import annotations

import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from sourcewise._version import __version__
from sourcewise.errors import ConfigError

__all__ = ["DEFAULT_CHAIN", "Settings", "config_path", "load_settings"]

# Seed 000's order: Gemini (API key, then an MCP server, then the gemini CLI), then the keyed
# engines, then the keyless ones (README, "Providers", says why in this order). Providers that are
# not configured are passed over, so Gemini is first exactly when GEMINI_API_KEY is set.
DEFAULT_CHAIN = (
    "gemini",
    "mcp",
    "gemini-cli",
    "searxng",
    "brave",
    "tavily",
    "google",
    "duckduckgo",
    "ddgs",
    "duckduckgo_instant",
)
_config_file: ContextVar[Path | None] = ContextVar("sourcewise_config_file", default=None)


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback)


def config_path() -> Path:
    """The TOML file that settings are read from (it need not exist)."""
    explicit = _config_file.get() or os.environ.get("SOURCEWISE_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return _xdg("XDG_CONFIG_HOME", ".config") / "sourcewise" / "config.toml"


def _aliases(name: str, *env: str) -> AliasChoices:
    return AliasChoices(name, f"SOURCEWISE_{name.upper()}", *env)


class Settings(BaseSettings):
    """Every knob sourcewise has. Construct with ``load_settings()`` to get clear errors."""

    model_config = SettingsConfigDict(env_prefix="SOURCEWISE_", extra="forbid", frozen=True)

    providers: Annotated[list[str], NoDecode] = Field(
        default=list(DEFAULT_CHAIN),
        description="provider chain in priority order; the first that answers wins. In the config "
        "file either a list, or a [providers] table with `chain` and a [providers.NAME] section per "
        "provider that declares options",
    )
    provider_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="[providers.NAME] sections, validated by each provider's own options model",
    )
    plugins: Annotated[list[str] | None, NoDecode] = Field(
        default=None,
        description="allowlist of third-party plug-ins (providers and sources, entry-point names); "
        "unset: every installed plug-in loads; the built-ins always do",
    )
    redis_url: SecretStr | None = Field(
        default=None, description="redis://host:port/db: page cache and suspensions in Redis, not SQLite"
    )
    timeout: float = Field(
        default=10.0, gt=0, le=120, description="seconds for a whole search or page fetch, retries included"
    )
    max_results: int = Field(default=10, ge=1, le=50)
    suspend_seconds: float = Field(
        default=300.0, ge=0, description="first back-off after a 429 or CAPTCHA; doubles, max 1 h"
    )
    state_dir: Path = Field(default_factory=lambda: _xdg("XDG_CACHE_HOME", ".cache") / "sourcewise")
    user_agent: str = f"sourcewise/{__version__} (+https://pypi.org/project/sourcewise/)"

    # Grounding links of Gemini, the gemini CLI and MCP agents (seeds 000, 002) resolved on these hosts.
    gemini_redirect_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["vertexaisearch.cloud.google.com"],
        description="hosts whose grounding links are redirects to resolve to the real page",
    )

    # Page fetching (seed 000: 15-minute cache, 10 s timeout).
    cache_ttl: float = Field(default=900.0, ge=0, description="seconds a fetched page stays cached")
    max_redirects: int = Field(default=5, ge=0, le=20)
    max_bytes: int = Field(default=5_000_000, ge=1024, description="stop reading a body past this size")
    max_chars: int = Field(default=20_000, ge=100, description="characters of content per page slice")
    host_concurrency: int = Field(default=2, ge=1, le=16, description="requests at once to one host")
    host_interval: float = Field(default=0.0, ge=0, description="minimum seconds between requests to a host")
    fetch_retries: int = Field(default=2, ge=0, le=5, description="retries of transient fetch failures")
    max_retry_after: float = Field(default=10.0, ge=0, description="longest Retry-After worth waiting for")
    allow_private: bool = Field(default=False, description="let the fetcher reach private addresses")
    allow_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="hosts the fetcher may reach whatever they resolve to"
    )

    # Routing and planning (seeds 001 and 003).
    recency_keywords: Annotated[list[str], NoDecode] = Field(default_factory=list)
    external_keywords: Annotated[list[str], NoDecode] = Field(default_factory=list)
    internal_keywords: Annotated[list[str], NoDecode] = Field(default_factory=list)
    variants: list[list[str]] = Field(default_factory=list, description="extra synonym groups")
    sources: Annotated[dict[str, dict[str, Any]], NoDecode] = Field(
        default_factory=dict,
        description="[sources.NAME] sections: type (the plug-in, default NAME) and its options; "
        "a comma-separated list of names is a section each with default options",
    )
    access: Annotated[dict[str, dict[str, Any]], NoDecode] = Field(
        default_factory=dict,
        description="[access.NAME] sections: key_sha256 and the sources that user may search (access.py)",
    )
    ask_sources: Annotated[list[str] | None, NoDecode] = Field(
        default=None,
        description="the sources `ask` reads when none is named; unset: every [sources.NAME] plus the "
        "knowledge base once indexed (the web is added when a question needs it)",
    )
    model_url: str | None = Field(
        default=None,
        description="an OpenAI-compatible Chat Completions base URL (OpenAI, Ollama, vLLM, llama.cpp) "
        "for written answers; unset: extractive answers, no model",
    )
    model_name: str = Field(default="gpt-4o-mini", description="the model to ask for")
    model_api_key: SecretStr | None = Field(
        default=None, validation_alias=_aliases("model_api_key", "OPENAI_API_KEY")
    )
    model_timeout: float = Field(default=30.0, gt=0, le=300, description="seconds for the model's answer")
    source_timeout: float = Field(
        default=10.0, gt=0, le=300, description="seconds per source in ask (and for a first index in search)"
    )
    kb_mode: Literal["auto", "lexical", "hybrid", "semantic"] = Field(
        default="auto",
        description="how a knowledge base searches when its [sources.NAME] sets no mode: auto is hybrid "
        "in a lasting process (serve, mcp: the semantic model loads once, at start) and lexical in a "
        "one-shot command (loading the model costs seconds a run); see docs/knowledge-base.md",
    )

    tiers: dict[str, int] = Field(
        default_factory=dict, description="host or domain -> tier (1-4), beats the built-in table"
    )
    official: dict[str, list[str]] = Field(
        default_factory=dict, description="project name -> its official domains (extends the table)"
    )

    @model_validator(mode="before")
    @classmethod
    def _provider_table(cls, data: Any) -> Any:
        """``[providers]`` as a table: ``chain`` is the list, each sub-table a provider's options."""
        if isinstance(data, dict) and isinstance(data.get("providers"), dict):
            data = dict(data)
            table = dict(data.pop("providers"))
            if "chain" in table:
                data["providers"] = table.pop("chain")
            bad = [k for k, v in table.items() if not isinstance(v, dict)]
            if bad:
                raise ValueError(f"[providers]: {bad[0]!r} is neither `chain` nor a [providers.NAME] table")
            data["provider_options"] = {**table, **data.get("provider_options", {})}
        return data

    @field_validator("plugins", mode="before")
    @classmethod
    def _plugin_names(cls, value: Any) -> Any:
        return cls._split(value)

    @field_validator(
        "providers",
        "ask_sources",
        "allow_hosts",
        "recency_keywords",
        "external_keywords",
        "internal_keywords",
        mode="before",
    )
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("gemini_redirect_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        return cls._split(value)

    @field_validator("sources", mode="before")
    @classmethod
    def _sections(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list | tuple):
            return {str(name): {} for name in value}
        return value

    @field_validator("providers")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [name.lower() for name in value]

    @field_validator("tiers")
    @classmethod
    def _tier_range(cls, value: dict[str, int]) -> dict[str, int]:
        bad = {k: v for k, v in value.items() if v not in (1, 2, 3, 4)}
        if bad:
            raise ValueError(f"tiers must be 1-4, got {bad}")
        return {k.lower(): v for k, v in value.items()}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, config_path()))


def load_settings(config: str | Path | None = None, **overrides: Any) -> Settings:
    """Read settings from the file, the environment and ``overrides``; ``ConfigError`` if bad.

    Settings are read here, at the edge (a door, a CLI command, a ``Session`` opened without
    settings), and passed down: nothing keeps them between calls. Plug-in options
    (``[providers.NAME]``, ``[sources.NAME]``) are validated when a session loads its registry.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    return _load(config, clean)


def _load(config: str | Path | None, clean: dict[str, Any]) -> Settings:
    token = _config_file.set(Path(config) if config else None)
    try:
        path = config_path()
        if (config or os.environ.get("SOURCEWISE_CONFIG")) and not path.is_file():
            raise ConfigError(f"Config file {path} does not exist")
        settings = Settings(**clean)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {config_path()} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Config file {config_path()} is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise ConfigError(f"Config file {config_path()} cannot be read ({exc.strerror or exc})") from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"Invalid settings (from {config_path()} or environment): {problems}") from exc
    finally:
        _config_file.reset(token)
    from sourcewise.registry import Registry  # local: the registry imports the plug-ins, which import this

    Registry.load(settings)  # unknown providers and bad plug-in options fail here, at the edge
    return settings
