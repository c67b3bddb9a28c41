"""robots.txt (RFC 9309): may a crawler with this user agent fetch this URL?

``robots_allowed(robots_txt, user_agent, url)`` is pure: no I/O, no clock. The rules, in order:

1. Input: ``bytes`` or ``str`` (encoded as UTF-8). Only the first ``MAX_BYTES`` (500 KiB, the
   RFC's minimum) are read; a line cut by that limit is dropped, never half-read. A UTF-8 byte
   order mark (or a leading part of one) at the start is skipped. Lines end at LF, CR or CRLF;
   bytes past ``MAX_LINE`` on one line are ignored; ``#`` starts a comment.
2. A line is ``key: value``. As Google's parser does, a line without the colon is read as a key
   and a value when it has exactly two words (``disallow /``); keys are case-insensitive and
   read by their start (``user-agent``, ``useragent``, ``user agent``; ``allow``; ``disallow``
   and its common misspellings ``dissallow``, ``dissalow``, ``disalow``, ``diasllow``,
   ``disallaw``). Other keys (``sitemap``, ``crawl-delay``, garbage) are ignored.
3. Groups: consecutive ``user-agent`` lines open a group and the rules after them belong to it;
   a ``user-agent`` line after a rule opens the next group. Blank lines do not end a group.
   A group line names a product token: its leading letters, ``-`` and ``_`` (``FooBot/2.1``
   and ``FooBot extra`` both name ``foobot``), compared case-insensitively; ``*`` (alone or
   followed by a space) is the global group. Every group naming our token applies, merged;
   only when none does, every ``*`` group applies; rules before any group apply to nobody.
   A group naming us with no rules allows everything (the ``*`` groups are not consulted).
4. ``user_agent`` is our product token (``sourcewise``) or a full User-Agent header
   (``sourcewise/1.4 (+https://…)``), whose token is the text before the first ``/``. A
   token must be letters, ``-`` and ``_`` only; anything else names no group (only ``*``).
5. Matching: the URL's path, parameters and query (``/`` when empty; the fragment dropped)
   against each applicable rule's pattern. Both are normalised alike: bytes outside printable
   ASCII are percent-encoded as UTF-8, escapes of unreserved characters are decoded (``%7E``
   -> ``~``) and other escapes upper-cased. In a pattern, ``*`` matches any run of bytes and a
   final ``$`` anchors the end; otherwise a pattern matches a prefix. The longest matching
   pattern (in bytes) wins; ``Allow`` wins a tie; an empty pattern matches nothing; no match
   means allowed. As Google does, ``Allow: /dir/index.html`` (or ``.htm``) also allows
   ``/dir/``. The answer for ``/robots.txt`` itself is what the rules say (Google's cases ask
   for that); the fetcher, not this function, applies the RFC's "implicitly allowed" to it.

Work is bounded by construction: each pattern is matched by greedy left-to-right search for
its literal pieces (no backtracking), so one rule costs O(len(path) + len(pattern)) and a call
at most O(len(robots_txt) x len(path)), whatever the wildcards.
"""

from __future__ import annotations

import re

from sourcewise.errors import InvalidInput

__all__ = ["MAX_BYTES", "MAX_LINE", "robots_allowed"]

MAX_BYTES = 500 * 1024  # RFC 9309 section 2.5: parse at least 500 KiB
MAX_LINE = 2083 * 8  # bytes kept per line (Google's limit); the rest of a long line is ignored

_BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\n\v\f\r"
_USER_AGENT_KEYS = (b"user-agent", b"useragent", b"user agent")
_DISALLOW_KEYS = (b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
_TOKEN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# One escape or one byte to escape: alternatives that cannot overlap, so the scan is linear.
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})|[^\x21-\x7e]")


def robots_allowed(robots_txt: bytes | str, user_agent: str, url: str) -> bool:
    """Whether ``robots_txt`` lets the crawler ``user_agent`` fetch ``url`` (RFC 9309).

    ``url`` is an absolute URL or a path. See the module's docstring for the rules. Arguments
    of the wrong type are ``InvalidInput``; any text or bytes give an answer.
    """
    if not isinstance(robots_txt, bytes | bytearray | str):
        raise InvalidInput(f"robots_txt must be bytes or str, not {type(robots_txt).__name__}")
    if not isinstance(user_agent, str) or not isinstance(url, str):
        raise InvalidInput("user_agent and url must be str")
    body = robots_txt.encode("utf-8", "replace") if isinstance(robots_txt, str) else bytes(robots_txt)
    token = _own_token(user_agent)
    path = _normalise(_path_of(url))
    best: dict[tuple[bool, bool], int] = {}  # (specific, allow) -> longest matching pattern
    specific = named_us = in_global = after_rule = False
    for key, value in _lines(body):
        if key.startswith(_USER_AGENT_KEYS):
            if after_rule:  # a user-agent line after a rule opens a new group
                specific = in_global = after_rule = False
            if value[:1] == b"*" and value[1:2] in (b"", b" ", b"\t"):
                in_global = True
            elif token and _group_token(value) == token:
                specific = named_us = True
            continue
        allow = key.startswith(b"allow")
        if not (allow or key.startswith(_DISALLOW_KEYS)) or not (specific or in_global):
            continue
        after_rule = True
        length = _match_length(path, value, allow)
        if length > best.get((specific, allow), 0):
            best[(specific, allow)] = length
    return _verdict(best, named_us)


def _verdict(best: dict[tuple[bool, bool], int], named_us: bool) -> bool:
    for specific in (True, False):
        allow, disallow = best.get((specific, True), 0), best.get((specific, False), 0)
        if allow or disallow:
            return allow >= disallow
        if named_us:  # our group exists but no rule in it matched: allowed, * not consulted
            return True
    return True


def _lines(body: bytes) -> list[tuple[bytes, bytes]]:
    """The (lower-cased key, value) pairs of ``body``, in order."""
    truncated = len(body) > MAX_BYTES
    body = body[:MAX_BYTES]
    for byte in _BOM:  # a BOM, or a leading part of one, is skipped
        if not body or body[0] != byte:
            break
        body = body[1:]
    lines = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    if truncated:
        lines.pop()  # cut by the limit: never read half a rule
    pairs = []
    for raw in lines:
        pair = _key_value(raw[: MAX_LINE - 1])
        if pair is not None:
            pairs.append(pair)
    return pairs


def _key_value(line: bytes) -> tuple[bytes, bytes] | None:
    line = line.split(b"#", 1)[0].strip(_SPACE)
    key, colon, value = line.partition(b":")
    if not colon:  # Google: "disallow /" means "disallow: /" when there are exactly two words
        words = line.split()
        if len(words) != 2:
            return None
        key, value = words
    key = key.strip(_SPACE)
    if not key:
        return None
    return key.lower(), value.strip(_SPACE)


def _own_token(user_agent: str) -> bytes:
    """The product token of our user agent, lower-cased; empty when it is not a valid token."""
    token = user_agent.strip().split("/", 1)[0].encode("utf-8", "replace")
    return token.lower() if token and all(byte in _TOKEN_BYTES for byte in token) else b""


def _group_token(value: bytes) -> bytes:
    end = 0
    while end < len(value) and value[end] in _TOKEN_BYTES:
        end += 1
    return value[:end].lower()


def _path_of(url: str) -> bytes:
    """Path, parameters and query of ``url`` (Google's reading: never fails), as bytes."""
    start = 2 if url.startswith("//") else 0
    early = _find_any(url, "/?;", start)
    scheme_end = url.find("://", start)
    # "://" marks the scheme's end only when no path, parameter or query began before it
    after_scheme = start if scheme_end < 0 or 0 <= early < scheme_end else scheme_end + 3
    begin = _find_any(url, "/?;", after_scheme)
    if begin < 0:
        return b"/"
    fragment = url.find("#", start)
    if 0 <= fragment < begin:
        return b"/"
    path = url[begin : fragment if fragment >= 0 else len(url)]
    if not path.startswith("/"):
        path = "/" + path
    return path.encode("utf-8", "replace")


def _find_any(text: str, chars: str, start: int) -> int:
    found = [i for i in (text.find(char, start) for char in chars) if i >= 0]
    return min(found) if found else -1


def _normalise(text: bytes) -> bytes:
    """Percent-encoding made canonical. ``*`` and ``$`` are printable ASCII and not unreserved,
    so a pattern's wildcards are never escaped and an escaped ``%2A`` never becomes one."""

    def fix(match: re.Match[bytes]) -> bytes:
        if match.group(1) is None:
            return b"%%%02X" % match.group()[0]
        byte = int(match.group(1), 16)
        return bytes([byte]) if byte in _UNRESERVED else b"%" + match.group(1).upper()

    return _ESCAPE.sub(fix, text)


def _match_length(path: bytes, value: bytes, allow: bool) -> int:
    """The length of the pattern ``value`` when it matches ``path``, else 0."""
    if not value:
        return 0
    pattern = _normalise(value)
    if _matches(path, pattern):
        return len(pattern)
    if allow:  # Google: allowing /dir/index.html (or .htm) allows /dir/
        slash = pattern.rfind(b"/")
        if slash >= 0 and pattern[slash:].startswith(b"/index.htm"):
            directory = pattern[: slash + 1] + b"$"
            if _matches(path, directory):
                return len(directory)
    return 0


def _matches(path: bytes, pattern: bytes) -> bool:
    """``*`` is any run of bytes, a final ``$`` the end; otherwise a prefix match.

    Greedy: each literal piece is found at its leftmost place after the previous one, which is
    correct for patterns whose only wildcard is ``*`` and never backtracks.
    """
    anchored = pattern.endswith(b"$")
    pieces = (pattern[:-1] if anchored else pattern).split(b"*")
    first, last = pieces[0], pieces[-1]
    if not path.startswith(first):
        return False
    if len(pieces) == 1:
        return not anchored or len(path) == len(first)
    at = len(first)
    for piece in pieces[1:-1]:
        found = path.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    if anchored:
        return len(path) - len(last) >= at and path.endswith(last)
    return path.find(last, at) >= 0
