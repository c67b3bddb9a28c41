"""Checking an ``mcp`` source's configured arguments against its tool's input schema (JSON Schema),
read when the source connects: a tool that is not there, an argument it does not take, one it
requires and is not given, or a value of the wrong type is a ``ConfigError`` naming the source,
the tool and the argument, with what the tool takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sourcewise.errors import ConfigError
from sourcewise.sources.mcp.read import NUMBERS, ArgValue

__all__ = ["check_arguments", "describe_schema"]

_JSON_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def describe_schema(schema: Mapping[str, Any]) -> str:
    """A tool's arguments in one line: ``query (string, required), count (integer)``."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return "no arguments"
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out = []
    for name, prop in list(props.items())[:40]:
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        kind = "/".join(map(str, kind)) if isinstance(kind, list) else str(kind)
        out.append(f"{name} ({kind}{', required' if name in (required or []) else ''})")
    return ", ".join(out)


def _sent_as(value: ArgValue) -> type:
    """The JSON type a configured value is sent as (a lone ``{limit}`` is a number)."""
    if isinstance(value, str) and value.strip()[1:-1] in NUMBERS and value.strip().startswith("{"):
        return int
    return type(value)


def check_arguments(source: str, tool: str, arguments: Mapping[str, ArgValue], tools: Sequence[Any]) -> None:
    """``ConfigError`` unless ``tool`` is among ``tools`` and takes ``arguments``."""
    found = next((t for t in tools if getattr(t, "name", None) == tool), None)
    if found is None:
        names = ", ".join(sorted(str(getattr(t, "name", "?")) for t in tools)[:40]) or "none"
        raise ConfigError(f"source {source!r}: the server has no tool {tool!r}; its tools: {names}")
    schema = getattr(found, "input_schema", None) or {}
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    takes = f"{tool} takes {describe_schema(schema)}"
    unknown = sorted(set(arguments) - set(props))
    if props and unknown and schema.get("additionalProperties") is not True:
        raise ConfigError(
            f"source {source!r}: argument(s) {', '.join(unknown)} not taken by the tool; {takes}"
        )
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    missing = [r for r in required or [] if isinstance(r, str) and r not in arguments]
    if missing:
        raise ConfigError(f"source {source!r}: the tool requires {', '.join(missing)}; {takes}")
    for name, value in arguments.items():
        prop = props.get(name)
        wanted = prop.get("type") if isinstance(prop, dict) else None
        kinds = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
        accepted = tuple(t for k in kinds if isinstance(k, str) for t in _JSON_TYPES.get(k, (object,)))
        sent = _sent_as(value)
        if kinds and accepted and not issubclass(sent, accepted) and not (sent is bool and bool in accepted):
            raise ConfigError(
                f"source {source!r}: argument {name!r} is sent as {_json_name(sent)} but the tool "
                f"wants {'/'.join(map(str, kinds))}; {takes}"
            )


def _json_name(kind: type) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}.get(
        kind, "a value"
    )
