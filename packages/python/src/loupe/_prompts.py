"""
Prompts by name, label or version from GET /api/prompt/resolve, cached in memory with
stale-while-revalidate: a fresh entry is answered, a stale one is answered at once while one
background refresh runs (kept if the refresh fails), and with nothing cached a failed fetch
answers the caller's fallback. Concurrent callers of one key share one request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

import httpx

from ._arguments import check_options
from ._contract import render_template
from ._errors import LoupeError
from ._http import http_error, request
from ._options import Options

if TYPE_CHECKING:
    from typing_extensions import Unpack

_PATH = "/api/prompt/resolve"


@dataclass(frozen=True)
class Prompt:
    """A prompt version of the service (or the caller's fallback, ``is_fallback=True``)."""

    id: int
    name: str
    version: str
    system_prompt: str
    human_prompt: str | None = None
    raw_prompt: str | None = None
    prompt_group_id: str = ""
    is_latest: bool = False
    #: Labels on this version ("latest" first when it is the latest).
    labels: list[str] = field(default_factory=list)
    description: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    is_fallback: bool = False

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Prompt:
        return cls(
            id=int(record.get("id", 0)),
            name=str(record["name"]),
            version=str(record.get("version", "")),
            system_prompt=str(record.get("systemPrompt", "")),
            human_prompt=record.get("humanPrompt"),
            raw_prompt=record.get("rawPrompt"),
            prompt_group_id=str(record.get("promptGroupId", "")),
            is_latest=bool(record.get("isLatest", False)),
            labels=list(record.get("labels") or []),
            description=record.get("description"),
            metadata=dict(record.get("metadata") or {}),
            output_schema=record.get("outputSchema"),
        )

    def render(self, variables: Mapping[str, Any] | None = None) -> RenderedPrompt:
        return render(self, variables)


#: A fallback: a system prompt text, or a prompt record in the service's wire names.
Fallback = Union[str, Mapping[str, Any]]


@dataclass(frozen=True)
class RenderedPrompt:
    system_prompt: str
    human_prompt: str | None
    #: Ready for a chat model: the system message, then the human message when there is one.
    messages: list[dict[str, str]]


def render(prompt: Prompt | Mapping[str, Any], variables: Mapping[str, Any] | None = None) -> RenderedPrompt:
    """
    Fills a prompt's system and human templates together. Missing variables of both raise one
    LoupeError naming them all (``details["missing"]``): a half-filled prompt sent to a model is a bug.
    """
    if isinstance(prompt, Prompt):
        system_template, human_template = prompt.system_prompt, prompt.human_prompt
    else:
        system_template, human_template = str(prompt["systemPrompt"]), prompt.get("humanPrompt")
    values = variables or {}
    system = render_template(system_template, values)
    human = None if human_template is None else render_template(human_template, values)
    missing = list(dict.fromkeys([*system.missing, *(human.missing if human else [])]))
    if missing:
        raise LoupeError("prompt", f"Missing prompt variable(s): {', '.join(missing)}", {"missing": missing})
    messages = [{"role": "system", "content": system.text}]
    if human is not None and human.text:
        messages.append({"role": "user", "content": human.text})
    return RenderedPrompt(system_prompt=system.text, human_prompt=None if human is None else human.text, messages=messages)


@dataclass
class _Entry:
    prompt: Prompt
    fetched_at: float
    refreshing: bool = False


_Which = tuple[Literal["label", "version", "latest"], str]


class PromptArgs(TypedDict, total=False):
    """Which version of a prompt to get, and how (``get_prompt``)."""

    #: An exact version such as 1.2.0 (instead of label).
    version: str | None
    #: A label such as production: the version it points at now.
    label: str | None
    #: How long a cached answer is fresh (default the client's prompt_cache_ttl_ms).
    cache_ttl_ms: int | None
    #: Answered (``is_fallback=True``) when nothing is cached and the service cannot answer.
    fallback: Fallback | None


class PromptClient:
    def __init__(self, options: Options, http: httpx.Client) -> None:
        self._options = options
        self._http = http
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, str], _Entry] = {}
        self._in_flight: dict[tuple[str, str, str], Future[Prompt]] = {}

    def get(self, name: str, **options: Unpack[PromptArgs]) -> Prompt:
        """The latest version of a prompt, or the one ``version`` names, or the one ``label`` points at now."""
        cached = self._cached(name, options)
        return cached if cached is not None else self._fetch_or_fallback(name, options)

    async def aget(self, name: str, **options: Unpack[PromptArgs]) -> Prompt:
        """``get`` for asyncio: a cached answer at once, a fetch on a worker thread (the loop never blocks)."""
        cached = self._cached(name, options)
        if cached is not None:
            return cached
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(self._fetch_or_fallback, name, options))

    def invalidate(self, name: str | None = None) -> None:
        """Forgets cached prompts (all, or one name's)."""
        with self._lock:
            for key in [k for k in self._cache if name is None or k[0] == name]:
                del self._cache[key]

    def _cached(self, name: str, options: PromptArgs) -> Prompt | None:
        check_options("get_prompt", options, PromptArgs.__optional_keys__)
        version, label, cache_ttl_ms = options.get("version"), options.get("label"), options.get("cache_ttl_ms")
        if label is not None and version is not None:
            raise LoupeError("prompt", f"Prompt {name}: give a label or a version, not both")
        key = (name, version or "", label or "")
        ttl = (cache_ttl_ms if cache_ttl_ms is not None else self._options.prompt_cache_ttl_ms) / 1000
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                return None
            if time.monotonic() - entry.fetched_at >= ttl and not entry.refreshing:
                entry.refreshing = True
                threading.Thread(target=self._refresh, args=(key, entry), name="loupe-prompt-refresh", daemon=True).start()
            return entry.prompt

    def _refresh(self, key: tuple[str, str, str], entry: _Entry) -> None:
        try:
            self._load(key, refresh=True)
        except Exception as error:  # noqa: BLE001 - the stale copy stays; the failure is reported
            self._report(_as_prompt_error(key[0], error))
        finally:
            entry.refreshing = False

    def _fetch_or_fallback(self, name: str, options: PromptArgs) -> Prompt:
        version, label, fallback = options.get("version"), options.get("label"), options.get("fallback")
        try:
            return self._load((name, version or "", label or ""))
        except Exception as error:
            failure = _as_prompt_error(name, error)
            if fallback is None:
                raise failure from error
            self._report(failure)
            return _fallback_prompt(name, version, fallback)

    def _load(self, key: tuple[str, str, str], *, refresh: bool = False) -> Prompt:
        """One fetch per key at a time; concurrent callers wait for it."""
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None and not refresh:
                # Fetched by another caller between this one's cache miss and here.
                return entry.prompt
            pending = self._in_flight.get(key)
            owner = pending is None
            if pending is None:
                pending = Future()
                self._in_flight[key] = pending
        if not owner:
            return pending.result()
        try:
            prompt = Prompt.from_record(self._fetch(key))
            with self._lock:
                self._cache[key] = _Entry(prompt, time.monotonic())
            pending.set_result(prompt)
            return prompt
        except BaseException as error:
            pending.set_exception(error)
            raise
        finally:
            with self._lock:
                self._in_flight.pop(key, None)

    def _fetch(self, key: tuple[str, str, str]) -> Mapping[str, Any]:
        name, version, label = key
        params = {"name": name}
        if label:
            params["label"] = label
        if version:
            params["version"] = version
        answer = request(self._http, "GET", _PATH, params=params)
        if answer.status == 404:
            what = f" label {label}" if label else f" version {version}" if version else ""
            raise LoupeError("prompt", f"No prompt {name}{what}", {"status": 404, "code": "NOT_FOUND"})
        if answer.status != 200:
            raise http_error("GET", _PATH, answer)
        record = answer.body.get("data") if isinstance(answer.body, dict) else None
        if not isinstance(record, dict) or record.get("name") != name:
            raise LoupeError("prompt", f"GET {_PATH} answered no prompt record")
        return record

    def _report(self, error: LoupeError) -> None:
        # The application's hook failing stays out of its way.
        with contextlib.suppress(Exception):
            self._options.on_error(error)


def _as_prompt_error(name: str, error: BaseException) -> LoupeError:
    if isinstance(error, LoupeError) and error.kind == "prompt":
        return error
    details = error.details if isinstance(error, LoupeError) else {"cause": error}
    message = error.message if isinstance(error, LoupeError) else str(error)
    return LoupeError("prompt", f"Prompt {name} could not be fetched: {message}", details)


def _fallback_prompt(name: str, version: str | None, fallback: Fallback) -> Prompt:
    given: Mapping[str, Any] = {"systemPrompt": fallback} if isinstance(fallback, str) else fallback
    record = {"id": 0, "version": version or "0.0.0", **given, "name": name}
    return dataclasses.replace(Prompt.from_record(record), is_fallback=True)
