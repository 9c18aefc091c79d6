"""
Experiments: a task run over a dataset's items as a run of that dataset (``Loupe.experiment``).
Each item is processed inside a traced span whose trace is the run item's; each evaluator's
scores are recorded on that trace (source ``eval``); a task or evaluator that raises is recorded
as its item's error and the run goes on. Nothing is retried.
"""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, Union
from urllib.parse import quote

from ._arguments import check_options
from ._errors import LoupeError
from ._http import HttpAnswer, http_error
from ._options import Options
from ._scores import score_payload
from ._span import error_message

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: Items and scores sent a request, at most (the service's bound).
_PER_REQUEST = 1000


@dataclass(frozen=True)
class ExperimentItem:
    """An item of a dataset, as the task and the evaluators get it."""

    id: str
    input: Any
    expected_output: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


#: What an evaluator answers: one score ``{"name": …, "value": …, "comment": …}`` or several.
EvaluatorScores = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]
Task = Callable[[ExperimentItem], Any]
Evaluator = Callable[[ExperimentItem, Any], Union[EvaluatorScores, Awaitable[EvaluatorScores]]]


@dataclass(frozen=True)
class ExperimentFailure:
    """What went wrong on one item; the run went on."""

    dataset_item_id: str
    stage: Literal["task", "evaluator"]
    message: str


@dataclass(frozen=True)
class ScoreFigure:
    """One score name over the run's items: items scored, mean, and the 95% interval of the mean."""

    name: str
    data_type: str
    n: int
    mean: float | None
    ci95: tuple[float, float] | None


@dataclass(frozen=True)
class ExperimentSummary:
    dataset_id: str
    run_id: str
    #: The run in the console.
    url: str
    items: int
    #: Items with an error recorded or a failed trace, as the service counts them.
    errors: int
    failures: list[ExperimentFailure]
    cost_usd: float | None
    latency_p50: float | None
    latency_p95: float | None
    scores: list[ScoreFigure]

    def text(self, name: str) -> str:
        """The summary as printed: per score mean and interval, cost, latency, errors, and the run's URL."""
        lines = [f"Experiment {name}: {self.items} items, {self.errors} errors, cost ${_figure(self.cost_usd)}"]
        lines.append(f"  latency p50 {_figure(self.latency_p50)} ms, p95 {_figure(self.latency_p95)} ms")
        for s in self.scores:
            low, high = s.ci95 if s.ci95 is not None else (None, None)
            lines.append(f"  {s.name}: mean {_figure(s.mean)} (95% {_figure(low)} to {_figure(high)}), n {s.n}")
        lines.extend(f"  error on {f.dataset_item_id} ({f.stage}): {f.message}" for f in self.failures)
        lines.append(f"  {self.url}")
        return "\n".join(lines)


class ExperimentHost(Protocol):
    """What an experiment needs of the client: its options, requests, spans and their flush."""

    options: Options

    def call_api(self, method: str, path: str, body: Any = None) -> HttpAnswer: ...

    def span(self, name: str, *, input: Any = None) -> Any: ...  # noqa: A002 - the span field's name

    def flush(self, timeout: float | None = None) -> bool: ...


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _call(host: ExperimentHost, method: str, path: str, body: Any = None) -> Any:
    """One request whose answer must be a success: its envelope's data and meta."""
    answer = host.call_api(method, path, body)
    if answer.status >= 300 or not isinstance(answer.body, dict):
        raise http_error(method, path, answer)
    return answer.body


@dataclass
class _Outcome:
    item: ExperimentItem
    trace_id: str = ""
    span_id: str = ""
    output: Any = None
    has_output: bool = False
    errors: list[str] = field(default_factory=list)
    failures: list[ExperimentFailure] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)


def _scores_of(given: Any) -> list[Mapping[str, Any]]:
    """An evaluator's answer as a list of scores; anything else is the evaluator's failure."""
    listed: Iterable[Any] = [given] if isinstance(given, Mapping) else given if isinstance(given, (list, tuple)) else [given]
    scores = []
    for score in listed:
        if not isinstance(score, Mapping) or not isinstance(score.get("name"), str) or "value" not in score:
            raise TypeError(f"an evaluator must answer {{'name': …, 'value': …}} or a list of them, got {score!r}")
        scores.append(score)
    return scores


async def _resolve(call: Callable[..., Any], args: tuple[Any, ...], pool: ThreadPoolExecutor) -> Any:
    """A coroutine function is awaited here; a plain function runs on the pool, in this context (the active span)."""
    if inspect.iscoroutinefunction(call):
        return await call(*args)
    context = contextvars.copy_context()
    result = await asyncio.get_running_loop().run_in_executor(pool, lambda: context.run(call, *args))
    return await result if inspect.isawaitable(result) else result


class ExperimentOptions(TypedDict, total=False):
    #: Evaluators ``(item, output) -> score(s)``, each run on every output.
    evaluators: Sequence[Evaluator]
    #: Items processed at once (default 4).
    concurrency: int
    #: What was run: the prompt version, the model, … (the run's metadata).
    metadata: Mapping[str, Any] | None
    description: str | None
    #: Where the summary goes (default the built-in print; None: nowhere).
    print: Callable[[str], Any] | None


class ExperimentArgs(ExperimentOptions):
    """An experiment (``Loupe.experiment``)."""

    #: The dataset's id.
    dataset: str
    #: The run's name, unique within the dataset.
    name: str
    task: Task


async def run_experiment(host: ExperimentHost, **experiment: Unpack[ExperimentArgs]) -> ExperimentSummary:
    """
    Runs ``task`` over the dataset's active items as a new run named ``name`` (see
    ``Loupe.experiment``): at most ``concurrency`` items at once, plain functions on threads,
    coroutine functions on this event loop.
    """
    check_options("experiment", experiment, _EXPERIMENT_FIELDS, ExperimentArgs.__required_keys__)
    dataset, name, task = experiment["dataset"], experiment["name"], experiment["task"]
    evaluators = experiment.get("evaluators", ())
    concurrency = experiment.get("concurrency", 4)
    metadata, description = experiment.get("metadata"), experiment.get("description")
    printer = experiment.get("print", builtins.print)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise LoupeError("config", f"concurrency must be an integer >= 1, got {concurrency!r}")
    path = f"/api/datasets/{quote(dataset, safe='')}"
    items = await asyncio.to_thread(_fetch_items, host, path)
    run_body: dict[str, Any] = {"name": name}
    if metadata:
        run_body["metadata"] = dict(metadata)
    if description:
        run_body["description"] = description
    run = (await asyncio.to_thread(_call, host, "POST", f"{path}/runs", run_body))["data"]
    run_id = str(run["id"])

    limit = asyncio.Semaphore(concurrency)
    environment = host.options.environment

    async def one(item: ExperimentItem, pool: ThreadPoolExecutor) -> _Outcome:
        outcome = _Outcome(item)
        async with limit:
            try:
                with host.span(f"experiment {name}", input={"raw": item.input}) as span:
                    outcome.trace_id, outcome.span_id = span.trace_id, span.span_id
                    output = await _resolve(task, (item,), pool)
                    span.set_output({"raw": output})
                outcome.output, outcome.has_output = output, True
            except Exception as error:  # noqa: BLE001 - the item's error, recorded; the run goes on
                outcome.errors.append(f"task: {error_message(error)}")
                outcome.failures.append(ExperimentFailure(item.id, "task", error_message(error)))
                return outcome
            for evaluator in evaluators:
                try:
                    for score in _scores_of(await _resolve(evaluator, (item, outcome.output), pool)):
                        outcome.scores.append(_eval_score(score, outcome.trace_id, environment))
                except Exception as error:  # noqa: BLE001 - as above
                    outcome.errors.append(f"evaluator: {error_message(error)}")
                    outcome.failures.append(ExperimentFailure(item.id, "evaluator", error_message(error)))
        return outcome

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="loupe-experiment") as pool:
        outcomes = await asyncio.gather(*(one(item, pool) for item in items))
    summary = await asyncio.to_thread(_record, host, path, run_id, dataset, outcomes)
    if printer is not None:
        printer(summary.text(name))
    return summary


_EXPERIMENT_FIELDS = ExperimentArgs.__required_keys__ | ExperimentArgs.__optional_keys__


def _eval_score(score: Mapping[str, Any], trace_id: str, environment: str | None) -> dict[str, Any]:
    return score_payload(
        name=score["name"],
        value=score["value"],
        trace_id=trace_id,
        comment=score.get("comment"),
        metadata=score.get("metadata"),
        environment=environment,
        source="eval",
    )


def _fetch_items(host: ExperimentHost, path: str) -> list[ExperimentItem]:
    items: list[ExperimentItem] = []
    cursor: str | None = None
    while True:
        page = _call(host, "GET", f"{path}/items?limit={_PER_REQUEST}" + (f"&cursor={quote(cursor, safe='')}" if cursor else ""))
        for record in page["data"]:
            items.append(ExperimentItem(record["id"], record.get("input"), record.get("expectedOutput"), record.get("metadata") or {}))
        cursor = page["meta"]["pagination"]["nextCursor"]
        if not cursor:
            return items


def _record(host: ExperimentHost, path: str, run_id: str, dataset: str, outcomes: list[_Outcome]) -> ExperimentSummary:
    """Sends the traces, the scores and the run items, then reads the run's figures."""
    host.flush()
    scores = [score for outcome in outcomes for score in outcome.scores]
    for start in range(0, len(scores), _PER_REQUEST):
        answer = _call(host, "POST", "/api/scores", {"scores": scores[start : start + _PER_REQUEST]})["data"]
        if answer["rejected"]:
            raise LoupeError("rejected", f"scores refused: {answer['errors']}", {"errors": answer["errors"]})
    run_items = []
    for o in outcomes:
        run_item: dict[str, Any] = {"datasetItemId": o.item.id, "traceId": o.trace_id, "spanId": o.span_id}
        if o.has_output and o.output is not None:
            run_item["output"] = o.output
        run_item["error"] = "; ".join(o.errors) if o.errors else None
        run_items.append(run_item)
    for start in range(0, len(run_items), _PER_REQUEST):
        chunk = {"items": run_items[start : start + _PER_REQUEST]}
        answer = _call(host, "POST", f"{path}/runs/{run_id}/items", chunk)["data"]
        if answer["rejected"]:
            raise LoupeError("rejected", f"run items refused: {answer['errors']}", {"errors": answer["errors"]})
    figures = _call(host, "GET", f"{path}/runs/{run_id}?limit=1")["data"]["figures"]
    return ExperimentSummary(
        dataset_id=dataset,
        run_id=run_id,
        url=f"{host.options.base_url}/datasets/{dataset}/runs/{run_id}",
        items=figures["items"],
        errors=figures["errors"],
        failures=[failure for o in outcomes for failure in o.failures],
        cost_usd=figures["costUsd"],
        latency_p50=figures["latencyP50"],
        latency_p95=figures["latencyP95"],
        scores=[
            ScoreFigure(
                s["name"],
                s["dataType"],
                s["n"],
                s["mean"],
                (s["ci95"]["low"], s["ci95"]["high"]) if s.get("ci95") else None,
            )
            for s in figures["scores"]
        ],
    )
