"""Stored API keys: ``sourcewise keys set NAME`` writes them to ``keys.json`` beside the config
file's default place (``$XDG_CONFIG_HOME/sourcewise/keys.json``, mode 0600, its folder 0700).

A stored key is an environment variable that the providers already read (``BRAVE_API_KEY`` ...):
the command line puts each stored key into its environment when the variable is not set, so a key
in the environment always wins and there is one way a provider finds its key.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from sourcewise.errors import ConfigError, InvalidOption

__all__ = ["KEY_NAMES", "apply_keys", "key_name", "keys_path", "set_key", "stored_keys"]

# What `keys set` accepts: the variables the built-in providers and the model read, by the
# variable's name or the short name before it.
KEY_NAMES = {
    "brave": "BRAVE_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "google": "GOOGLE_CSE_KEY",
    "google-cse-id": "GOOGLE_CSE_ID",
    "gemini": "GEMINI_API_KEY",
    "openai": "OPENAI_API_KEY",
    "server": "SOURCEWISE_API_KEY",
}
MAX_KEY_CHARS = 4096


def keys_path() -> Path:
    """Where stored keys live (the file need not exist)."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "sourcewise" / "keys.json"


def key_name(name: str) -> str:
    """The environment variable ``name`` stands for; ``InvalidOption`` listing the accepted ones."""
    cleaned = name.strip()
    if cleaned.lower() in KEY_NAMES:
        return KEY_NAMES[cleaned.lower()]
    if cleaned.upper() in KEY_NAMES.values():
        return cleaned.upper()
    accepted = ", ".join(f"{short} ({var})" for short, var in KEY_NAMES.items())
    shown = "".join(c if c.isprintable() else "?" for c in name[:40])
    raise InvalidOption(f"unknown key name {shown!r}: use one of {accepted}")


def stored_keys(path: Path | None = None) -> dict[str, str]:
    """The stored keys; ``ConfigError`` naming the file when it is not a JSON object of strings."""
    path = path or keys_path()
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # no file, or no config folder to hold one
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix it or delete it") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON ({exc}); fix it or delete it") from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and k in KEY_NAMES.values() and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"{path} must map key names ({', '.join(KEY_NAMES.values())}) to text")
    return data


def _check_value(value: str) -> str:
    value = value.strip()
    if not value:
        raise InvalidOption("the key is empty")
    if len(value) > MAX_KEY_CHARS:
        raise InvalidOption(f"the key is longer than {MAX_KEY_CHARS} characters")
    if not value.isprintable() or any(c.isspace() for c in value):
        raise InvalidOption("the key holds a space or a control character; paste the key alone")
    return value


def set_key(name: str, value: str, path: Path | None = None) -> tuple[str, Path]:
    """Store ``value`` under ``name`` (mode 0600, written whole or not at all): (variable, file)."""
    var = key_name(name)
    value = _check_value(value)
    path = path or keys_path()
    keys = stored_keys(path)
    keys[var] = value
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".keys.", dir=path.parent)  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(keys, f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return var, path


def apply_keys(path: Path | None = None) -> list[str]:
    """Put each stored key into the environment where it is not set; the names applied."""
    applied = []
    for var, value in stored_keys(path).items():
        if not os.environ.get(var):
            os.environ[var] = value
            applied.append(var)
    return applied
