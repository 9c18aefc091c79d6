"""``Loupe.experiment`` against the service: items traced, scores and failures recorded on their items."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import loupe
from conftest import Recorded, Service

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]


def make_dataset(service: Service, name: str, count: int) -> str:
    status, body = service.call("POST", "/api/datasets", {"name": name})
    assert status == 201, body
    dataset_id: str = body["data"]["id"]
    items = [{"id": f"q{i}", "input": {"a": i, "b": 2}, "expectedOutput": i + 2} for i in range(count)]
    status, body = service.call("POST", f"/api/datasets/{dataset_id}/items", {"items": items})
    assert status == 200 and body["data"]["accepted"] == count, body
    return dataset_id


def exact(item: loupe.ExperimentItem, output: Any) -> dict[str, Any]:
    return {"name": "exact", "value": output == item.expected_output}


def distance(item: loupe.ExperimentItem, output: Any) -> list[dict[str, Any]]:
    if item.input["a"] == 6:
        raise RuntimeError("the judge is away")
    return [{"name": "distance", "value": abs(output - item.expected_output), "comment": "absolute"}]


def test_a_sync_task_runs_on_threads_and_the_run_records_scores_failures_and_figures(
    make_client: MakeClient, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset_id = make_dataset(service, "py-arithmetic", 8)
    client, recorded = make_client()
    lock = threading.Lock()
    running = [0, 0]  # now, most at once
    threads: set[str] = set()

    def task(item: loupe.ExperimentItem) -> int:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
            threads.add(threading.current_thread().name)
        # The task runs inside the item's span: a span it opens is that span's child.
        with loupe_span(client, "inner"):
            time.sleep(0.05)
        with lock:
            running[0] -= 1
        a, b = item.input["a"], item.input["b"]
        if a == 3:
            raise ValueError("the adder broke")
        return int(a * b if a == 5 else a + b)

    summary = client.experiment(
        dataset=dataset_id, name="adder-v1", task=task, evaluators=[exact, distance], concurrency=3, metadata={"model": "adder"}
    )
    assert recorded.errors == []
    assert 1 < running[1] <= 3
    assert len(threads) > 1

    # q3's task failed, q6's second evaluator failed: both recorded on their items, the run went on.
    assert summary.failures == [
        loupe.ExperimentFailure("q3", "task", "the adder broke"),
        loupe.ExperimentFailure("q6", "evaluator", "the judge is away"),
    ]
    assert (summary.items, summary.errors) == (8, 2)
    scores = {s.name: s for s in summary.scores}
    # exact on the 7 items whose task answered: all but q5 (5·2 ≠ 7).
    assert (scores["exact"].data_type, scores["exact"].n) == ("boolean", 7)
    assert scores["exact"].mean == pytest.approx(6 / 7)
    # distance on 6 items (q3's task and q6's evaluator failed): 0 but q5's |10 - 7| = 3.
    assert (scores["distance"].data_type, scores["distance"].n) == ("numeric", 6)
    assert scores["distance"].mean == pytest.approx(3 / 6)
    assert scores["distance"].ci95 is not None and scores["distance"].ci95[0] < 0.5 < scores["distance"].ci95[1]
    assert summary.latency_p50 is not None and summary.latency_p50 >= 50
    assert summary.url == f"{service.base_url}/datasets/{dataset_id}/runs/{summary.run_id}"

    printed = capsys.readouterr().out
    assert printed.startswith("Experiment adder-v1: 8 items, 2 errors, cost $")
    assert "exact: mean 0.8571 (95% " in printed
    assert "error on q3 (task): the adder broke" in printed
    assert "error on q6 (evaluator): the judge is away" in printed
    assert printed.rstrip().endswith(summary.url)

    # The service holds the run: each item linked to its trace, which holds the spans and the scores.
    status, body = service.call("GET", f"/api/datasets/{dataset_id}/runs/{summary.run_id}?limit=100")
    assert status == 200
    run = body["data"]
    assert (run["name"], run["metadata"], run["itemCount"]) == ("adder-v1", {"model": "adder"}, 8)
    by_item = {i["datasetItemId"]: i for i in run["items"]}
    assert by_item["q3"]["error"] == "task: the adder broke" and by_item["q3"]["failed"] is True
    assert (by_item["q1"]["output"], by_item["q1"]["error"], by_item["q1"]["scores"]) == (3, None, {"exact": 1, "distance": 0})
    assert (by_item["q6"]["error"], by_item["q6"]["scores"]) == ("evaluator: the judge is away", {"exact": 1})
    trace = service.trace(by_item["q1"]["traceId"], 2)
    root = next(s for s in trace["spans"] if s["name"] == "experiment adder-v1")
    inner = next(s for s in trace["spans"] if s["name"] == "inner")
    assert (root["spanId"], inner["parentSpanId"]) == (by_item["q1"]["spanId"], root["spanId"])
    assert (root["input"]["raw"], root["output"]["raw"]) == ({"a": 1, "b": 2}, 3)
    assert sorted((s["name"], s["source"]) for s in trace["scores"]) == [("distance", "eval"), ("exact", "eval")]
    failed = service.trace(by_item["q3"]["traceId"], 2)
    assert next(s for s in failed["spans"] if s["name"] == "experiment adder-v1")["status"] == "error"


def loupe_span(client: loupe.Loupe, name: str) -> loupe.SpanScope:
    return client.span(name, kind="tool")


def test_an_async_task_and_evaluator_run_on_the_callers_loop_at_most_concurrency_at_once(make_client: MakeClient, service: Service) -> None:
    dataset_id = make_dataset(service, "py-async", 6)
    client, recorded = make_client()
    running = [0, 0]

    async def task(item: loupe.ExperimentItem) -> int:
        running[0] += 1
        running[1] = max(running[1], running[0])
        await asyncio.sleep(0.05)
        running[0] -= 1
        if item.id == "q2":
            raise RuntimeError("timeout")
        return int(item.input["a"] + item.input["b"])

    async def judge(item: loupe.ExperimentItem, output: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"name": "even", "value": output % 2 == 0}

    def not_a_score(item: loupe.ExperimentItem, output: Any) -> Any:
        return 42

    printed: list[str] = []

    async def main() -> loupe.ExperimentSummary:
        return await client.aexperiment(
            dataset=dataset_id, name="async-v1", task=task, evaluators=[judge, not_a_score], concurrency=2, print=printed.append
        )

    summary = asyncio.run(main())
    assert recorded.errors == []
    assert running[1] == 2
    # In the items' order, whatever order they finished in.
    assert [(f.dataset_item_id, f.stage) for f in summary.failures] == [
        ("q0", "evaluator"),
        ("q1", "evaluator"),
        ("q2", "task"),
        ("q3", "evaluator"),
        ("q4", "evaluator"),
        ("q5", "evaluator"),
    ]
    assert summary.failures[0].message == "an evaluator must answer {'name': …, 'value': …} or a list of them, got 42"
    assert (summary.items, summary.errors) == (6, 6)
    (even,) = summary.scores
    # q0, q1, q3, q4, q5 answered a + 2: even for q0 and q4.
    assert (even.name, even.data_type, even.n) == ("even", "boolean", 5)
    assert even.mean == pytest.approx(2 / 5)
    assert len(printed) == 1 and summary.run_id in printed[0]


def test_experiment_inside_a_running_loop_and_a_bad_concurrency_are_refused(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()

    async def inside() -> None:
        client.experiment(dataset="x", name="x", task=lambda item: item)

    with pytest.raises(loupe.LoupeError, match="aexperiment"):
        asyncio.run(inside())
    with pytest.raises(loupe.LoupeError, match="concurrency must be an integer >= 1"):
        client.experiment(dataset="x", name="x", task=lambda item: item, concurrency=0)
    with pytest.raises(loupe.LoupeError) as unknown:
        client.experiment(dataset="00000000-0000-4000-8000-000000000000", name="x", task=lambda item: item)
    assert (unknown.value.kind, unknown.value.details["status"]) == ("http", 404)
