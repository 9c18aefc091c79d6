"""The client: spans and their transport, decorators and context managers, prompts."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from contextvars import Context, Token, copy_context
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast, overload

import httpx

from . import _context
from ._arguments import check_options
from ._clock import new_trace_id
from ._context import TraceAttributes
from ._contract import SPAN_KINDS, SpanKind
from ._errors import LoupeError, LoupeErrorKind
from ._experiment import ExperimentArgs, ExperimentSummary, run_experiment
from ._http import HttpAnswer, make_http_client, request
from ._options import OptionArgs, resolve_options
from ._otel import active_otel_parent
from ._prompts import Prompt, PromptArgs, PromptClient, RenderedPrompt, render
from ._scores import ScoreArgs, score_payload
from ._span import PromptRef, Span, SpanIOLike, TraceInfo, error_message
from ._transport import SpanTransport, TransportStats

if TYPE_CHECKING:
    from typing_extensions import Unpack

F = TypeVar("F", bound=Callable[..., Any])

#: Items of a traced generator kept as its output, at most.
_MAX_YIELDED = 1000


class _NewTrace:
    """The ``parent=NEW_TRACE`` marker: start a new trace even when a span is active."""

    def __repr__(self) -> str:
        return "NEW_TRACE"


NEW_TRACE = _NewTrace()


class SpanArgs(TypedDict, total=False):
    """The options of a new span (``start_span``, ``span``)."""

    kind: SpanKind
    input: SpanIOLike | None
    attributes: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    #: The parent span; ``NEW_TRACE`` starts a new trace even when a span is active.
    parent: Span | _NewTrace | None
    trace_name: str | None
    session_id: str | None
    user_id: str | None
    tags: list[str] | tuple[str, ...] | None
    prompt: PromptRef | None


_SPAN_OPTIONS = SpanArgs.__optional_keys__
_NO_ATTRIBUTES = TraceAttributes()


class Loupe:
    """
    The Loupe client. Every argument has a ``LOUPE_*`` variable; arguments win over variables.

    api_key (LOUPE_API_KEY): workspace key; without one nothing is sent (spans still work).
    base_url (LOUPE_BASE_URL, http://127.0.0.1:3000), source (LOUPE_SOURCE, sdk),
    environment (LOUPE_ENVIRONMENT), session_id (LOUPE_SESSION_ID: session of every new trace),
    workspace_id / organization_id (LOUPE_WORKSPACE_ID / LOUPE_ORGANIZATION_ID),
    flush_interval_ms (5000), batch_size (10), max_retries (3), retry_base_delay_ms (1000,
    doubling), max_retry_delay_ms (60000), max_queue_size (10000), timeout_ms (10000),
    prompt_cache_ttl_ms (60000), enabled (LOUPE_ENABLED), on_error (default: a warning on the
    ``loupe`` logger), env (the mapping to read LOUPE_* from; default os.environ),
    http_client (an httpx.Client for prompts and experiments, e.g. through a proxy; spans and
    scores go on a connection of the standard library's http.client to base_url).
    """

    def __init__(self, *, http_client: httpx.Client | None = None, **options: Unpack[OptionArgs]) -> None:
        self.options = resolve_options(**options)
        self._http = http_client if http_client is not None else make_http_client(self.options)
        self._transport = SpanTransport(self.options)
        #: Prompts by name, label or version, cached: ``loupe.prompts.get("support", label="production")``.
        self.prompts = PromptClient(self.options, self._http)

    # Spans -------------------------------------------------------------------------------------

    def current_span(self) -> Span | None:
        """The span active in this context, if any."""
        return _context.active_span.get()

    def start_span(self, name: str, **options: Unpack[SpanArgs]) -> Span:
        """
        Starts a span without making it active (see ``span``). Its parent is ``parent``, else the
        innermost active span: Loupe's, or the application's OpenTelemetry span (whose trace it
        then joins); with neither it starts a new trace. ``parent=NEW_TRACE`` forces a new trace.
        Options: ``kind`` (default custom), ``input``, ``attributes``, ``metadata``, ``parent``,
        ``trace_name``, ``session_id``, ``user_id``, ``tags``, ``prompt``.
        """
        if not options.keys() <= _SPAN_OPTIONS:
            check_options("start_span", options, _SPAN_OPTIONS)
        kind = options.get("kind", "custom")
        parent = options.get("parent")
        trace_name = options.get("trace_name")
        session_id, user_id, tags = options.get("session_id"), options.get("user_id"), options.get("tags")
        if kind not in SPAN_KINDS:
            raise LoupeError("config", f"kind must be one of {', '.join(SPAN_KINDS)}, got {kind!r}")
        otel = active_otel_parent()
        context = _context.trace_attributes.get() or _NO_ATTRIBUTES
        trace: TraceInfo | None = None
        parent_span_id: str | None = None
        if isinstance(parent, Span):
            trace, parent_span_id = parent.trace, parent.span_id
        elif parent is None:
            active = _context.active_span.get()
            # An OpenTelemetry span other than the one active when the Loupe span started was
            # started inside it: that one is the innermost, so it is the parent.
            if active is not None and (otel is None or otel == active.otel_parent):
                trace, parent_span_id = active.trace, active.span_id
            elif otel is not None:
                # The trace is the application's: its name is its root span's, not set here.
                joined = TraceInfo(otel[0], trace_name)
                self._fill_new_trace(joined, context, session_id, user_id, tags)
                trace, parent_span_id = joined, otel[1]
        if trace is None:
            trace = TraceInfo(new_trace_id(), trace_name or context.trace_name or name)
            self._fill_new_trace(trace, context, session_id, user_id, tags)
        else:
            # Inside a trace, fields given here (or by trace_attributes) reach its spans still open.
            trace.session_id = session_id or context.session_id or trace.session_id
            trace.user_id = user_id or context.user_id or trace.user_id
            if tags is not None or context.tags:
                trace.tags = tuple(tags) if tags is not None else context.tags
        span = Span(
            name,
            kind=kind,
            trace=trace,
            parent_span_id=parent_span_id,
            sink=self._transport.add,
            otel_parent=otel,
            score_sink=self.score,
        )
        if "input" in options and (given := options["input"]) is not None:
            span.set_input(given)
        if attributes := options.get("attributes"):
            span.set_attributes(attributes)
        if metadata := options.get("metadata"):
            span.set_metadata(metadata)
        if (prompt := options.get("prompt")) is not None:
            span.set_prompt(prompt)
        return span

    def _fill_new_trace(
        self,
        trace: TraceInfo,
        context: TraceAttributes,
        session_id: str | None,
        user_id: str | None,
        tags: list[str] | tuple[str, ...] | None,
    ) -> None:
        trace.session_id = session_id or context.session_id or self.options.session_id
        trace.user_id = user_id or context.user_id
        trace.tags = tuple(tags) if tags is not None else context.tags

    def span(self, name: str, **options: Unpack[SpanArgs]) -> SpanScope:
        """
        ``with loupe.span("search", kind="retrieval") as span:`` (or ``async with``): a new
        active span (the options of ``start_span``), ended on leaving: status ok, or error with
        the exception's message (the exception goes on). A status set inside is kept.
        """
        if not options.keys() <= _SPAN_OPTIONS:
            check_options("span", options, _SPAN_OPTIONS)
        return SpanScope(lambda: self.start_span(name, **options))

    @contextmanager
    def use_span(self, span: Span) -> Iterator[Span]:
        """Makes an existing span active inside the block; it is not ended."""
        token = _context.active_span.set(span)
        try:
            yield span
        finally:
            _context.active_span.reset(token)

    @contextmanager
    def trace_attributes(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: list[str] | tuple[str, ...] | None = None,
        trace_name: str | None = None,
    ) -> Iterator[None]:
        """
        Session, user and tags of the traces whose spans start in the block: a trace started
        in it gets them, and a trace already open gets them on its spans that end after.
        """
        outer = _context.trace_attributes.get()
        merged = TraceAttributes(
            session_id=session_id or (outer.session_id if outer else None),
            user_id=user_id or (outer.user_id if outer else None),
            tags=tuple(tags) if tags is not None else (outer.tags if outer else ()),
            trace_name=trace_name or (outer.trace_name if outer else None),
        )
        token = _context.trace_attributes.set(merged)
        try:
            yield
        finally:
            _context.trace_attributes.reset(token)

    @property
    def observe(self) -> Observer:
        """
        ``@client.observe`` or ``@client.observe(kind="tool")``: every call runs in a new active
        span of this client (see ``Observer``).
        """
        return Observer(lambda: self)

    # Prompts -----------------------------------------------------------------------------------

    def get_prompt(self, name: str, **options: Unpack[PromptArgs]) -> Prompt:
        """The latest version of a prompt, or ``version``, or the one ``label`` points at; cached (``cache_ttl_ms``), ``fallback``."""
        return self.prompts.get(name, **options)

    async def aget_prompt(self, name: str, **options: Unpack[PromptArgs]) -> Prompt:
        """``get_prompt`` for asyncio code."""
        return await self.prompts.aget(name, **options)

    def invalidate_prompts(self, name: str | None = None) -> None:
        self.prompts.invalidate(name)

    def render(self, prompt: Prompt | Mapping[str, Any], variables: Mapping[str, Any] | None = None) -> RenderedPrompt:
        return render(prompt, variables)

    # Experiments -------------------------------------------------------------------------------

    def experiment(self, **experiment: Unpack[ExperimentArgs]) -> ExperimentSummary:
        """
        Runs ``task(item)`` over the active items of the dataset ``dataset`` (its id) as a new run
        ``name``: each item inside a traced span (its trace is the run item's), then each of
        ``evaluators`` ``(item, output) -> {"name", "value", "comment"?}`` (or a list of them), its
        scores recorded on the item's trace with source ``eval``. At most ``concurrency`` (4) items
        at once: plain functions on threads, coroutine functions on an event loop. Nothing is
        retried; a task or evaluator that raises is recorded as its item's error and the run goes
        on. ``metadata`` and ``description`` are the run's. Prints the summary (``print=None``:
        not) and answers it. From asyncio code use ``aexperiment``.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise LoupeError("config", "experiment() was called inside a running event loop: use `await aexperiment(...)` there")
        return asyncio.run(run_experiment(self, **experiment))

    async def aexperiment(self, **experiment: Unpack[ExperimentArgs]) -> ExperimentSummary:
        """``experiment`` for asyncio code: coroutine tasks and evaluators run on the caller's loop."""
        return await run_experiment(self, **experiment)

    def call_api(self, method: str, path: str, body: Any = None) -> HttpAnswer:
        """One request to the service's REST API with the client's credentials; raises LoupeError('network') without an answer."""
        return request(self._http, method, path, body=body)

    # Scores ------------------------------------------------------------------------------------

    def score(self, **score: Unpack[ScoreArgs]) -> str:
        """
        Queues a score ``name`` with ``value`` on a trace (``trace_id``), a span (``trace_id`` and
        ``span_id``) or a session (``session_id``): a number (numeric), a label (categorical) or
        a bool (boolean); options ``id``, ``data_type``, ``comment``, ``metadata``, ``timestamp``,
        ``environment`` (default the client's), ``eval_trace_id``. Sent to POST /api/scores
        (source ``sdk``) with the spans' batching, retries and exit flush. Answers its id:
        passing it as ``id`` again corrects the score. Never raises for the service's sake: a
        refused score goes to ``on_error``.
        """
        payload = score_payload(default_environment=self.options.environment, **score)
        self._transport.add_score(payload)
        return str(payload["id"])

    def flush(self, timeout: float | None = None) -> bool:
        """Sends what is queued and waits for it; never raises (failures go to on_error). False on timeout."""
        return self._transport.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Sends all that remains and stops the background thread (also done at interpreter exit)."""
        self._transport.shutdown(timeout)

    def stats(self) -> TransportStats:
        return self._transport.stats()


class ObserveArgs(TypedDict, total=False):
    """The options of ``@observe(...)``."""

    #: The span's name; default the function's qualified name.
    name: str | None
    kind: SpanKind
    #: Record the arguments as ``input.raw`` (default True).
    capture_input: bool
    #: Record the result as ``output.raw`` (default True).
    capture_output: bool
    attributes: Mapping[str, Any] | None


class Observer:
    """
    ``@observe`` or ``@observe(kind="tool")``: every call of the function runs in a new active
    span named after it, with its arguments as ``input.raw`` and its result as ``output.raw``.
    Works on functions, coroutines, generators and async generators (their span lasts until
    they finish; the yielded items are the output). The client is ``client_of()``, asked at
    each call: the module's ``loupe.observe`` finds the default client when the function runs.
    """

    __slots__ = ("_client_of",)

    def __init__(self, client_of: Callable[[], Loupe]) -> None:
        self._client_of = client_of

    @overload
    def __call__(self, func: F, /) -> F: ...

    @overload
    def __call__(self, func: None = None, /, **options: Unpack[ObserveArgs]) -> Callable[[F], F]: ...

    def __call__(self, func: F | None = None, /, **options: Unpack[ObserveArgs]) -> F | Callable[[F], F]:
        check_options("observe", options, ObserveArgs.__optional_keys__)
        name, kind, attributes = options.get("name"), options.get("kind", "custom"), options.get("attributes")
        capture_input, capture_output = options.get("capture_input", True), options.get("capture_output", True)
        if kind not in SPAN_KINDS:
            raise LoupeError("config", f"kind must be one of {', '.join(SPAN_KINDS)}, got {kind!r}")

        def decorate(fn: F) -> F:
            return trace_function(self._client_of, fn, name, kind, capture_input, capture_output, attributes)

        return decorate(func) if func is not None else decorate


class SpanScope(AbstractContextManager[Span], AbstractAsyncContextManager[Span]):
    """The context manager of ``Loupe.span``: starts the span on entry, makes it active, ends it on exit."""

    __slots__ = ("_span", "_start", "_token")

    def __init__(self, start: Callable[[], Span]) -> None:
        self._start = start
        self._span: Span | None = None
        self._token: Token[Span | None] | None = None

    def __enter__(self) -> Span:
        self._span = self._start()
        self._token = _context.active_span.set(self._span)
        return self._span

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        span, token = self._span, self._token
        if token is not None:
            _context.active_span.reset(token)
        if span is not None:
            _settle(span, exc, None, False)

    async def __aenter__(self) -> Span:
        return self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.__exit__(exc_type, exc, tb)


def _settle(span: Span, error: BaseException | None, result: Any, record_output: bool) -> None:
    """Ends the span by the specification's status rules: ok unless it raised; a status set inside wins."""
    if error is not None and not isinstance(error, (GeneratorExit, StopIteration, StopAsyncIteration)):
        span.end(status="error", status_message=error_message(error))
        return
    if record_output and span.output is None and result is not None:
        span.set_output({"raw": result})
    span.end(status="ok" if span.status == "unset" else span.status, status_message=span.status_message)


def trace_function(
    client_of: Callable[[], Loupe],
    fn: F,
    name: str | None,
    kind: SpanKind,
    capture_input: bool,
    capture_output: bool,
    attributes: Mapping[str, Any] | None,
) -> F:
    """Wraps fn so that each call runs in a new active span of the client ``client_of()`` answers."""
    span_name: str = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "anonymous"
    read_arguments = _argument_reader(fn) if capture_input else None

    def start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Span:
        span = client_of().start_span(span_name, kind=kind, attributes=attributes)
        if read_arguments is not None:
            span.input = {"raw": read_arguments(args, kwargs)}
        return span

    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        def async_gen_wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            return _traced_async_generator(start(args, kwargs), fn(*args, **kwargs), capture_output)

        return cast(F, async_gen_wrapper)

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            span = start(args, kwargs)
            context = copy_context()
            context.run(_context.active_span.set, span)
            return _traced_generator(span, context.run(fn, *args, **kwargs), context, capture_output)

        return cast(F, gen_wrapper)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            span = start(args, kwargs)
            token = _context.active_span.set(span)
            try:
                result = await cast(Callable[..., Awaitable[Any]], fn)(*args, **kwargs)
            except BaseException as error:
                _settle(span, error, None, False)
                raise
            finally:
                _context.active_span.reset(token)
            _settle(span, None, result, capture_output)
            return result

        return cast(F, async_wrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        span = start(args, kwargs)
        token = _context.active_span.set(span)
        try:
            result = fn(*args, **kwargs)
        except BaseException as error:
            _settle(span, error, None, False)
            raise
        finally:
            _context.active_span.reset(token)
        _settle(span, None, result, capture_output)
        return result

    return cast(F, wrapper)


def _argument_reader(fn: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    """
    How a call's arguments are recorded: by parameter name (``self`` and ``cls`` left out, defaults
    not filled in). The names are read once here; each call only pairs them with its values, which
    costs a fraction of ``Signature.bind``.
    """
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return lambda args, kwargs: {"args": list(args), "kwargs": kwargs}
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
    skip = 1 if positional and positional[0] in ("self", "cls") else 0
    names = positional[skip:]
    count = len(positional)

    def read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        recorded = dict(zip(names, args[skip:count]))
        if len(args) > count:
            recorded[rest or "args"] = list(args[count:])
        if kwargs:
            recorded.update(kwargs)
        return recorded

    return read


def _traced_generator(span: Span, gen: Iterator[Any], context: Context, capture_output: bool) -> Generator[Any, Any, Any]:
    """Runs each step of gen in its own context (where the span is active) and ends the span with it."""
    items: list[Any] = []
    send: Callable[[Any], Any] = gen.send if hasattr(gen, "send") else (lambda _: next(gen))
    method, argument = send, None
    while True:
        try:
            item = context.run(method, argument)
        except StopIteration as stop:
            _settle(span, None, stop.value if stop.value is not None else (items or None), capture_output)
            return stop.value
        except BaseException as error:
            _settle(span, error, None, False)
            raise
        if capture_output and len(items) < _MAX_YIELDED:
            items.append(item)
        try:
            argument = yield item
            method = send
        except GeneratorExit:
            # The consumer stopped early: what was produced so far is the output.
            context.run(getattr(gen, "close", lambda: None))
            _settle(span, None, items or None, capture_output)
            raise
        except BaseException as error:  # noqa: BLE001 - thrown in by the consumer: passed on to gen
            method, argument = getattr(gen, "throw"), error  # noqa: B009 - a plain iterator has none: the error goes on


async def _traced_async_generator(span: Span, agen: AsyncIterator[Any], capture_output: bool) -> AsyncIterator[Any]:
    items: list[Any] = []
    asend = getattr(agen, "asend")  # noqa: B009
    athrow = getattr(agen, "athrow")  # noqa: B009
    method, argument = asend, None
    while True:
        token = _context.active_span.set(span)
        try:
            item = await method(argument)
        except StopAsyncIteration:
            _settle(span, None, items or None, capture_output)
            return
        except BaseException as error:
            _settle(span, error, None, False)
            raise
        finally:
            _context.active_span.reset(token)
        if capture_output and len(items) < _MAX_YIELDED:
            items.append(item)
        try:
            argument = yield item
            method = asend
        except GeneratorExit:
            await getattr(agen, "aclose")()  # noqa: B009
            _settle(span, None, items or None, capture_output)
            raise
        except BaseException as error:  # noqa: BLE001 - thrown in by the consumer: passed on to agen
            method, argument = athrow, error


__all__ = ["NEW_TRACE", "Loupe", "LoupeErrorKind", "ObserveArgs", "Observer", "SpanArgs", "SpanScope", "trace_function"]
