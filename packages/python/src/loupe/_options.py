"""Options of a client: arguments win over ``LOUPE_*`` variables, which win over the defaults."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from ._errors import LoupeError

_log = logging.getLogger("loupe")


def _warn(error: LoupeError) -> None:
    _log.warning("[loupe] %s", error.message)


@dataclass(frozen=True)
class Options:
    """The resolved options (see ``Loupe.__init__`` for each one's meaning and variable)."""

    api_key: str | None
    base_url: str
    source: str
    environment: str | None
    session_id: str | None
    workspace_id: str | None
    organization_id: str | None
    flush_interval_ms: int
    batch_size: int
    max_retries: int
    retry_base_delay_ms: int
    max_retry_delay_ms: int
    max_queue_size: int
    timeout_ms: int
    prompt_cache_ttl_ms: int
    enabled: bool
    on_error: Callable[[LoupeError], None]


def _text(value: str | None) -> str | None:
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _count(name: str, given: int | None, raw: str | None, fallback: int, minimum: int) -> int:
    if given is not None:
        value: object = given
    elif _text(raw) is None:
        value = fallback
    else:
        try:
            value = int(_text(raw) or "")
        except ValueError:
            value = None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        shown = given if given is not None else raw
        raise LoupeError("config", f"{name} must be an integer >= {minimum}, got {shown}")
    return value


def resolve_options(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    source: str | None = None,
    environment: str | None = None,
    session_id: str | None = None,
    workspace_id: str | None = None,
    organization_id: str | None = None,
    flush_interval_ms: int | None = None,
    batch_size: int | None = None,
    max_retries: int | None = None,
    retry_base_delay_ms: int | None = None,
    max_retry_delay_ms: int | None = None,
    max_queue_size: int | None = None,
    timeout_ms: int | None = None,
    prompt_cache_ttl_ms: int | None = None,
    enabled: bool | None = None,
    on_error: Callable[[LoupeError], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> Options:
    e: Mapping[str, str] = os.environ if env is None else env
    key = api_key if api_key is not None else _text(e.get("LOUPE_API_KEY"))
    url = (base_url or _text(e.get("LOUPE_BASE_URL")) or "http://127.0.0.1:3000").rstrip("/")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise LoupeError("config", f"base_url must be an absolute http(s) URL, got {url}")
    enabled_raw = (_text(e.get("LOUPE_ENABLED")) or "").lower()
    on = enabled if enabled is not None else enabled_raw not in ("false", "0")
    return Options(
        api_key=key,
        base_url=url,
        source=source or _text(e.get("LOUPE_SOURCE")) or "sdk",
        environment=environment or _text(e.get("LOUPE_ENVIRONMENT")),
        session_id=session_id or _text(e.get("LOUPE_SESSION_ID")),
        workspace_id=workspace_id or _text(e.get("LOUPE_WORKSPACE_ID")),
        organization_id=organization_id or _text(e.get("LOUPE_ORGANIZATION_ID")),
        flush_interval_ms=_count("flush_interval_ms", flush_interval_ms, e.get("LOUPE_FLUSH_INTERVAL_MS"), 5000, 1),
        batch_size=_count("batch_size", batch_size, e.get("LOUPE_BATCH_SIZE"), 10, 1),
        max_retries=_count("max_retries", max_retries, e.get("LOUPE_MAX_RETRIES"), 3, 0),
        retry_base_delay_ms=_count("retry_base_delay_ms", retry_base_delay_ms, e.get("LOUPE_RETRY_BASE_DELAY_MS"), 1000, 0),
        max_retry_delay_ms=_count("max_retry_delay_ms", max_retry_delay_ms, e.get("LOUPE_MAX_RETRY_DELAY_MS"), 60_000, 0),
        max_queue_size=_count("max_queue_size", max_queue_size, e.get("LOUPE_MAX_QUEUE_SIZE"), 10_000, 1),
        timeout_ms=_count("timeout_ms", timeout_ms, e.get("LOUPE_TIMEOUT_MS"), 10_000, 1),
        prompt_cache_ttl_ms=_count("prompt_cache_ttl_ms", prompt_cache_ttl_ms, e.get("LOUPE_PROMPT_CACHE_TTL_MS"), 60_000, 0),
        enabled=on and key is not None,
        on_error=on_error or _warn,
    )
