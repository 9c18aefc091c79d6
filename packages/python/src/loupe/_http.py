"""One request to the service over httpx (prompts, experiments), and what the service's answers mean."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ._errors import LoupeError
from ._options import Options

VERSION = "0.1.0"


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    #: Looked up by lower-case name.
    headers: Mapping[str, str]
    #: The parsed JSON body, or None when it is not JSON.
    body: Any


def credential_headers(options: Options) -> dict[str, str]:
    """The headers of every request: the key and the workspace it reads, and who is asking."""
    headers = {"accept": "application/json", "user-agent": f"loupe-python/{VERSION}"}
    if options.api_key:
        headers["x-api-key"] = options.api_key
    if options.workspace_id:
        headers["x-workspace-id"] = options.workspace_id
    if options.organization_id:
        headers["x-organization-id"] = options.organization_id
    return headers


def make_http_client(options: Options) -> httpx.Client:
    return httpx.Client(base_url=options.base_url, headers=credential_headers(options), timeout=options.timeout_ms / 1000)


def request(client: httpx.Client, method: str, path: str, *, params: dict[str, str] | None = None, body: Any = None) -> HttpAnswer:
    """Raises LoupeError('network') when no answer comes."""
    try:
        response = client.request(method, path, params=params, **({} if body is None else {"json": body}))
    except httpx.HTTPError as cause:
        raise LoupeError("network", f"{method} {path} got no answer: {cause or type(cause).__name__}", {"cause": cause}) from cause
    try:
        parsed: Any = response.json() if response.content else None
    except ValueError:
        parsed = None
    return HttpAnswer(status=response.status_code, headers=response.headers, body=parsed)


def http_error(method: str, path: str, answer: HttpAnswer, span_count: int | None = None) -> LoupeError:
    """The error the service put in its envelope, as LoupeError('http')."""
    error = answer.body.get("error") if isinstance(answer.body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    details: dict[str, Any] = {"status": answer.status}
    if code:
        details["code"] = code
    if span_count is not None:
        details["span_count"] = span_count
    return LoupeError("http", f"{method} {path} answered {answer.status}{': ' + message if message else ''}", details)


def retry_after_ms(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Retry-After as milliseconds: delta-seconds or an HTTP date; None when absent or bad."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return float(value) * 1000 if float(value) >= 0 else None
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() * 1000 - (now if now is not None else time.time() * 1000))
