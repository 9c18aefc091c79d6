"""A small HTTP server in front of the service that fails a set number of requests before passing them on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


@dataclass
class FlakyProxy:
    url: str
    #: Requests still to fail, and with which status.
    failures_left: int = 0
    status: int = 503
    #: (monotonic time, method, path, status answered) of every request.
    seen: list[tuple[float, str, str, int]] = field(default_factory=list)
    #: The client port of every request: one per connection.
    ports: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def flaky_proxy(upstream: str, failures: int = 0, status: int = 503, close_silently: bool = False) -> Iterator[FlakyProxy]:
    """``close_silently``: answer as HTTP/1.1 (the connection kept alive), then close it without saying so."""
    state = FlakyProxy(url="", failures_left=failures, status=status)
    forward = httpx.Client(base_url=upstream, timeout=30)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if close_silently else "HTTP/1.0"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            with state.lock:
                fail = state.failures_left > 0
                if fail:
                    state.failures_left -= 1
            if fail:
                answer = b'{"error":{"code":"SERVICE_UNAVAILABLE","message":"failing on purpose"}}'
                code = state.status
                headers = {"content-type": "application/json"}
            else:
                keep = {k: v for k, v in self.headers.items() if k.lower() in ("x-api-key", "content-type", "accept")}
                response = forward.request(self.command, self.path, content=body, headers=keep)
                answer, code = response.content, response.status_code
                headers = {"content-type": response.headers.get("content-type", "application/json")}
            with state.lock:
                state.seen.append((time.monotonic(), self.command, self.path.split("?")[0], code))
                state.ports.append(self.client_address[1])
            self.send_response(code)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            self.close_connection = True

        do_GET = _handle
        do_POST = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        forward.close()
