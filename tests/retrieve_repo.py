"""A folder-backed code source and a small repository for the retrieval tests.

``FolderSource`` is a ``Source`` written by the tests, as a plug-in would be: it reads the files
under its folder and returns each file that shares an analyzed word with the query, best first.
The repository's task words ("rate limiting") occur nowhere in the code: the code says "throttle".
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from sourcewise.config import Settings
from sourcewise.models import Hit, SourceKind, SourceQuery, SourceResult
from sourcewise.sources import Source, SourceOptions
from sourcewise.text.analyze import analyze

TASK = "Add rate limiting to API endpoints"
REPO = {
    "src/app/routes.py": '''"""HTTP API endpoints for users and orders."""
from app.middleware.throttle import throttle
from app.db import fetch_orders, fetch_user


@throttle(per_minute=60)
def get_user_endpoint(user_id):
    """API endpoint: one user."""
    return fetch_user(user_id)


@throttle(per_minute=30)
def list_orders_endpoint(user_id):
    """API endpoint: a user's orders."""
    return fetch_orders(user_id)
''',
    "src/app/middleware/throttle.py": '''"""A token bucket that slows callers down when they call too often."""
import time


class Throttle:
    def __init__(self, per_minute):
        self.per_minute = per_minute
        self.tokens = per_minute
        self.stamp = time.monotonic()

    def allow(self, caller):
        self.refill()
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def refill(self):
        now = time.monotonic()
        self.tokens = min(self.per_minute, self.tokens + (now - self.stamp) * self.per_minute / 60)
        self.stamp = now


def throttle(per_minute):
    bucket = Throttle(per_minute)

    def wrap(handler):
        def guarded(*args):
            if not bucket.allow(args[:1]):
                raise TooManyCalls(handler.__name__)
            return handler(*args)
        return guarded
    return wrap


class TooManyCalls(Exception):
    pass
''',
    "src/app/middleware/__init__.py": "from .throttle import Throttle, throttle\n",
    "src/app/db.py": '''"""Database access: users and orders."""
import sqlite3


def fetch_user(user_id):
    with sqlite3.connect("app.db") as db:
        return db.execute("select * from users where id = ?", (user_id,)).fetchone()


def fetch_orders(user_id):
    with sqlite3.connect("app.db") as db:
        return db.execute("select * from orders where user_id = ?", (user_id,)).fetchall()
''',
    "src/app/billing.py": '''"""Invoices for orders."""


def invoice_total(lines):
    return sum(line.price * line.quantity for line in lines)
''',
    "src/app/version.py": '''"""Version of the api package."""
VERSION = "1.4"
''',
    "tests/test_rate_limit.py": '''"""Rate limiting of the API endpoints."""
from app.middleware.throttle import Throttle


def test_rate_limit_api_endpoints():
    assert Throttle(1).allow("x")
''',
}


# Seed 004's first worked example: the bug is in auth.ts, tokens.ts is related; the session manager
# and the JWT helpers say "refresh" and "jwt", words the task does not use; user.ts is unrelated.
AUTH_TASK = "Fix the authentication token expiry bug"
AUTH_REPO = {
    "src/auth/auth.ts": """// Authentication: checks a request's token and its expiry.
import { decodeJwt } from "./jwt-utils";
import { refreshSession } from "./session-manager";
import { Token } from "./tokens";

export function authenticate(header: string): Token | null {
  const token = decodeJwt(header);
  // expiry is compared in seconds against milliseconds
  if (token.expiresAt > Date.now()) {
    return refreshSession(token);
  }
  return token;
}

export function isExpired(token: Token): boolean {
  return token.expiresAt * 1000 < Date.now();
}
""",
    "src/auth/tokens.ts": """// Tokens: what a token holds and how long it lives.
export interface Token {
  subject: string;
  expiresAt: number;
}

export const TOKEN_LIFETIME_SECONDS = 3600;

export function issueToken(subject: string): Token {
  return { subject, expiresAt: Math.floor(Date.now() / 1000) + TOKEN_LIFETIME_SECONDS };
}
""",
    "src/auth/session-manager.ts": """// Sessions: keep a signed-in caller's session alive.
import { signJwt } from "./jwt-utils";

export function refreshSession(claims: { subject: string }) {
  const renewed = { subject: claims.subject, renewedAt: Date.now() };
  return signJwt(renewed);
}

export function endSession(subject: string): void {
  sessions.delete(subject);
}

const sessions = new Map<string, number>();
""",
    "src/auth/jwt-utils.ts": """// JWT helpers: encode and decode signed claims.
export function decodeJwt(header: string) {
  const [, payload] = header.split(".");
  return JSON.parse(atob(payload));
}

export function signJwt(claims: object): string {
  return ["e30", btoa(JSON.stringify(claims)), "sig"].join(".");
}
""",
    "src/models/user.ts": """// A user of the shop.
export class User {
  constructor(public id: string, public email: string) {}

  displayName(): string {
    return this.email.split("@")[0];
  }
}
""",
    "src/billing/invoice.ts": """// Invoices: totals of an order's lines.
export function invoiceTotal(lines: { price: number; quantity: number }[]): number {
  return lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
}
""",
    "src/api/routes.ts": """// HTTP routes of the shop.
import { invoiceTotal } from "../billing/invoice";

export const routes = { "/invoice": invoiceTotal };
""",
    "docs/auth.md": "# Authentication\n\nSign in, then send the token with each request.\n",
}


def write_repo(root: Path, files: dict[str, str] = REPO) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    return root


class FolderSource(Source):
    """Every file under a folder, matched on analyzed words: more distinct words shared, earlier."""

    type = "folder"
    kind: ClassVar[SourceKind] = "code"  # type: ignore[misc]
    authority = "code"

    def __init__(self, root: Path, name: str = "repo") -> None:
        super().__init__(name, SourceOptions(path=root), Settings())
        self.root = root
        self.queries: list[str] = []

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        self.queries.append(query.query)
        parsed, warnings = self.parse(query)
        words = set(analyze(parsed.text))
        found: list[tuple[int, str, str]] = []
        for path in sorted(self.root.rglob("*")):
            if not path.is_file():
                continue
            text = path.read_text("utf-8")
            shared = len(words & set(analyze(text)))
            if shared:
                found.append((shared, path.relative_to(self.root).as_posix(), text))
        found.sort(key=lambda f: (-f[0], f[1]))
        hits = [
            Hit(
                title=rel, location=f"{rel}#L1-L{text.count(chr(10)) + 1}", path=rel, text=text,
                snippet=text[:200], source=self.name, kind="code", authority="code", score=float(n),
                start_line=1, end_line=text.count("\n") + 1,
            )
            for n, rel, text in found[: limit or 10]
        ]  # fmt: skip
        return self.result(query, hits, warnings)
