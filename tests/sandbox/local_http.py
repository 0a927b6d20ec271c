"""A real HTTP server on 127.0.0.1 standing in for a model API (shared by sandbox tests)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def serve(body: Callable[[str], bytes]) -> Iterator[int]:
    """Serve ``GET path`` with ``body(path)`` until the block ends; yields the port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    with running(Handler) as port:
        yield port


@contextmanager
def running(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """A threading server on 127.0.0.1 with ``handler`` until the block ends; the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
