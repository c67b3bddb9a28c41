"""Google's robots.txt conformance cases (github.com/google/robotstxt-spec-test), read from a git
directory fetched beside the project; nothing of them is committed here.

The cases are protocol-buffer text files (specification.proto: ``tests`` of ``robotstxt`` and
``test_expectations`` with ``testurl``, ``useragent``, ``expected_outcome``). This reads just
that much of the text format: fields, ``[...]`` lists, ``{...}`` messages, adjacent string
literals with C escapes.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

SPEC_GIT = Path(os.environ.get("SOURCEWISE_ROBOTS_SPEC", "/work/.mirror/google+robotstxt-spec-test/repo"))
FOLDERS = ("src/main/resources/CTC/correctness/", "src/main/resources/CTC/stress/")

_TOKEN = re.compile(
    rb"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<sym>[:\[\]{},])"""
)
_ESCAPES = {b"n": 10, b"r": 13, b"t": 9, b'"': 34, b"'": 39, b"\\": 92, b"a": 7, b"b": 8, b"f": 12, b"v": 11}


@dataclass(frozen=True)
class Case:
    file: str
    robots_txt: bytes
    url: str
    user_agent: str
    allowed: bool
    google_specific: bool


def _unescape(literal: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(literal):
        char = literal[i : i + 1]
        if char != b"\\":
            out += char
            i += 1
            continue
        nxt = literal[i + 1 : i + 2]
        if nxt == b"x":
            digits = re.match(rb"[0-9A-Fa-f]{1,2}", literal[i + 2 :])
            assert digits, literal
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        elif nxt.isdigit():
            digits = re.match(rb"[0-7]{1,3}", literal[i + 1 :])
            assert digits, literal
            out.append(int(digits.group(), 8))
            i += 1 + len(digits.group())
        else:
            out.append(_ESCAPES[nxt])
            i += 2
    return bytes(out)


def _tokens(text: bytes) -> list[tuple[str, bytes]]:
    tokens: list[tuple[str, bytes]] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        assert match, f"cannot read the text format at {text[at : at + 40]!r}"
        at = match.end()
        kind = match.lastgroup
        if kind == "str" and tokens and tokens[-1][0] == "str":  # adjacent literals join
            tokens[-1] = ("str", tokens[-1][1] + _unescape(match.group()[1:-1]))
        elif kind == "str":
            tokens.append(("str", _unescape(match.group()[1:-1])))
        elif kind is not None:
            tokens.append((kind, match.group()))
    return tokens


def _value(tokens: list[tuple[str, bytes]], at: int) -> tuple[object, int]:
    kind, text = tokens[at]
    if kind in ("str", "word"):
        return text, at + 1
    if text == b"[":
        items: list[object] = []
        at += 1
        while tokens[at][1] != b"]":
            item, at = _value(tokens, at)
            items.append(item)
            if tokens[at][1] == b",":
                at += 1
        return items, at + 1
    assert text == b"{", tokens[at]
    return _message(tokens, at + 1, b"}")


def _message(tokens: list[tuple[str, bytes]], at: int, end: bytes | None) -> tuple[object, int]:
    fields: dict[str, list[object]] = {}
    while at < len(tokens) and tokens[at][1] != end:
        name = tokens[at][1].decode()
        at += 1
        if tokens[at][1] == b":":
            at += 1
        value, at = _value(tokens, at)
        fields.setdefault(name, []).extend(value if isinstance(value, list) else [value])
        if at < len(tokens) and tokens[at][1] in (b",", b";"):
            at += 1
    return fields, at + 1


def parse_cases(name: str, text: bytes) -> list[Case]:
    spec, _ = _message(_tokens(text), 0, None)
    assert isinstance(spec, dict)
    cases = []
    for test in spec.get("tests", []):
        robots_txt = b"".join(test.get("robotstxt", []))
        for expectation in test.get("test_expectations", []):
            outcome = expectation["expected_outcome"][0]
            assert outcome in (b"ALLOWED", b"DISALLOWED"), outcome
            cases.append(
                Case(
                    name,
                    robots_txt,
                    expectation["testurl"][0].decode("utf-8"),
                    expectation["useragent"][0].decode("utf-8"),
                    outcome == b"ALLOWED",
                    expectation.get("test_type", [b"STANDARD"])[0] == b"GOOGLE_SPECIFIC",
                )
            )
    return cases


def _git(*args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(SPEC_GIT), *args], check=True, capture_output=True, timeout=60
    ).stdout


def load_cases() -> list[Case] | None:
    """Every correctness and stress case, or None when the fetched repository is not here."""
    if not SPEC_GIT.is_dir():
        return None
    names = _git("ls-tree", "-r", "--name-only", "HEAD", "--", *FOLDERS).decode().split()
    cases: list[Case] = []
    for name in names:
        if name.endswith(".textproto"):
            cases.extend(parse_cases(name, _git("show", f"HEAD:{name}")))
    return cases
