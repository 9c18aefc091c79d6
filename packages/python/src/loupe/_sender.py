"""
The transport's HTTP client: the standard library's ``http.client`` on one kept-alive connection,
used by the background thread alone. A POST there costs a fraction of httpx's, and every
microsecond the thread holds the interpreter is taken from the application's threads.
"""

from __future__ import annotations

import http.client
import json
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from ._errors import LoupeError
from ._http import HttpAnswer, credential_headers
from ._options import Options

#: What a kept-alive connection the server has closed meanwhile raises on its next request.
_STALE = (http.client.RemoteDisconnected, http.client.CannotSendRequest, BrokenPipeError, ConnectionResetError)


class Sender:
    """POSTs JSON to the service on one connection, opened on first use and again after a failure."""

    def __init__(self, options: Options) -> None:
        url = urlsplit(options.base_url)
        self._https = url.scheme == "https"
        self._host = url.hostname or "127.0.0.1"
        self._port = url.port
        self._prefix = url.path.rstrip("/")
        self._timeout = options.timeout_ms / 1000
        self._headers = {**credential_headers(options), "content-type": "application/json"}
        self._connection: http.client.HTTPConnection | None = None
        # The proxy of the standard variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), as httpx and
        # urllib take them: https through a CONNECT tunnel, http by absolute URLs.
        proxy = None if urllib.request.proxy_bypass(self._host) else urllib.request.getproxies().get(url.scheme)
        self._proxy = urlsplit(proxy if "://" in proxy else f"http://{proxy}") if proxy else None
        if self._proxy is not None and not self._https:
            self._prefix = f"{url.scheme}://{url.netloc}{self._prefix}"

    def reset(self) -> None:
        """Forgets the connection (closing it): the next request opens a new one."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def post(self, path: str, body: Any) -> HttpAnswer:
        """Raises LoupeError('network') when no answer comes."""
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        reused = self._connection is not None
        try:
            return self._exchange(path, payload)
        except _STALE:
            # The server closed the idle connection before this request reached it: a new
            # connection, once, at once (what every keep-alive client does; not a retry of a
            # request the server saw).
            self.reset()
            if not reused:
                raise self._network(path, "the connection was closed") from None
        except (OSError, http.client.HTTPException) as cause:
            self.reset()
            raise self._network(path, str(cause) or type(cause).__name__) from cause
        try:
            return self._exchange(path, payload)
        except (OSError, http.client.HTTPException) as cause:
            self.reset()
            raise self._network(path, str(cause) or type(cause).__name__) from cause

    def _exchange(self, path: str, payload: bytes) -> HttpAnswer:
        connection = self._connection
        if connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            if self._proxy is None:
                connection = kind(self._host, self._port, timeout=self._timeout)
            else:
                connection = kind(self._proxy.hostname or "127.0.0.1", self._proxy.port, timeout=self._timeout)
                if self._https:
                    connection.set_tunnel(self._host, self._port)
            self._connection = connection
        connection.request("POST", self._prefix + path, body=payload, headers=self._headers)
        response = connection.getresponse()
        content = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
        if response.will_close:
            self.reset()
        try:
            parsed: Any = json.loads(content) if content else None
        except ValueError:
            parsed = None
        return HttpAnswer(status=response.status, headers=headers, body=parsed)

    @staticmethod
    def _network(path: str, why: str) -> LoupeError:
        return LoupeError("network", f"POST {path} got no answer: {why}")
