"""Options of a client: arguments win over ``LOUPE_*`` variables, which win over the defaults."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlparse

from ._arguments import check_options
from ._errors import LoupeError

if TYPE_CHECKING:
    from typing_extensions import Unpack

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


#: The integer options: default, least value. Each has its variable LOUPE_<NAME>.
_COUNTS: dict[str, tuple[int, int]] = {
    "flush_interval_ms": (5000, 1),
    "batch_size": (10, 1),
    "max_retries": (3, 0),
    "retry_base_delay_ms": (1000, 0),
    "max_retry_delay_ms": (60_000, 0),
    "max_queue_size": (10_000, 1),
    "timeout_ms": (10_000, 1),
    "prompt_cache_ttl_ms": (60_000, 0),
}


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


class OptionArgs(TypedDict, total=False):
    """The options a client is made with (``Loupe(**options)``, ``configure``); see ``Loupe``."""

    api_key: str | None
    base_url: str | None
    source: str | None
    environment: str | None
    session_id: str | None
    workspace_id: str | None
    organization_id: str | None
    flush_interval_ms: int | None
    batch_size: int | None
    max_retries: int | None
    retry_base_delay_ms: int | None
    max_retry_delay_ms: int | None
    max_queue_size: int | None
    timeout_ms: int | None
    prompt_cache_ttl_ms: int | None
    enabled: bool | None
    on_error: Callable[[LoupeError], None] | None
    env: Mapping[str, str] | None


def resolve_options(**given: Unpack[OptionArgs]) -> Options:
    check_options("Loupe", given, OptionArgs.__optional_keys__)
    env = given.get("env")
    api_key = given.get("api_key")
    base_url = given.get("base_url")
    enabled = given.get("enabled")
    e: Mapping[str, str] = os.environ if env is None else env
    counts: Mapping[str, Any] = given

    def count(name: str) -> int:
        fallback, minimum = _COUNTS[name]
        return _count(name, counts.get(name), e.get("LOUPE_" + name.upper()), fallback, minimum)

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
        source=given.get("source") or _text(e.get("LOUPE_SOURCE")) or "sdk",
        environment=given.get("environment") or _text(e.get("LOUPE_ENVIRONMENT")),
        session_id=given.get("session_id") or _text(e.get("LOUPE_SESSION_ID")),
        workspace_id=given.get("workspace_id") or _text(e.get("LOUPE_WORKSPACE_ID")),
        organization_id=given.get("organization_id") or _text(e.get("LOUPE_ORGANIZATION_ID")),
        flush_interval_ms=count("flush_interval_ms"),
        batch_size=count("batch_size"),
        max_retries=count("max_retries"),
        retry_base_delay_ms=count("retry_base_delay_ms"),
        max_retry_delay_ms=count("max_retry_delay_ms"),
        max_queue_size=count("max_queue_size"),
        timeout_ms=count("timeout_ms"),
        prompt_cache_ttl_ms=count("prompt_cache_ttl_ms"),
        enabled=on and key is not None,
        on_error=given.get("on_error") or _warn,
    )
