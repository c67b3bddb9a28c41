"""A tiny HTTP server on 127.0.0.1 for tests: scripted answers per path, requests counted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "text/html; charset=utf-8"


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[Seen], Reply]


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        outer = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(self.command, parts.path, parts.query, dict(self.headers), body)
                with outer._lock:
                    outer.seen.append(seen)
                handler = outer.routes.get(parts.path)
                reply = handler(seen) if handler else Reply(404, b"not found")
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body.encode() if isinstance(reply.body, str) else reply.body
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_HEAD = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def route(self, path: str, reply: Reply | Handler) -> None:
        self.routes[path] = reply if callable(reply) else (lambda _seen, r=reply: r)

    def hits(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)


@contextmanager
def local_server() -> Iterator[LocalServer]:
    server = LocalServer()
    # shutdown() waits for the serving loop to notice; the default 0.5 s poll made every test wait for it.
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
