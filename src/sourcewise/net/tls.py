"""The process's one TLS context, shared by every client (providers' and the guarded fetcher's).

Building a context reads the CA bundle: about 50 ms of CPU on a quiet machine (90 ms under load),
which was three quarters of a search's time (benchmarks/bench_doors.py) and four fifths of a
one-shot ``fetch``. An ``ssl.SSLContext`` is safe to share between connections, clients and
threads. The SSRF guard does not rest on it: addresses are checked where connections are made
(``net.guard``), whatever CA bundle (``SSL_CERT_FILE``) the context trusts.
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()
