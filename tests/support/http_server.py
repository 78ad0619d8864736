"""A local HTTP server in a daemon thread, for the fake network services the tests talk to."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: how often `serve_forever` looks for `shutdown()`: its 0.5 s default is waited at every stop
POLL_S = 0.02


def start(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on a free port of 127.0.0.1, serving `handler` until `stop`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(POLL_S,), daemon=True).start()
    return server


def stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
