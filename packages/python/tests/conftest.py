"""
The tests run against a real Loupe service started here from the repository's source
(``node --import tsx src/main.ts start``): PostgreSQL is a fresh database on the server named
by LOUPE_TEST_DATABASE_URL, else on 127.0.0.1:5432 when one answers there, else the embedded
one; ClickHouse is the embedded engine in a temporary data directory.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

import loupe

REPO_ROOT = Path(__file__).resolve().parents[3]
VECTORS = REPO_ROOT / "packages" / "sdk" / "src" / "contract" / "vectors.json"


@dataclass
class Service:
    base_url: str
    api_key: str

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"x-api-key": self.api_key}
        response = httpx.request(method, self.base_url + path, headers=headers, json=body, timeout=30)
        return response.status_code, response.json() if response.content else None

    def trace(self, trace_id: str, spans: int, timeout: float = 20) -> dict[str, Any]:
        """The stored trace once it holds ``spans`` spans (the write may land a moment after the answer)."""
        deadline = time.monotonic() + timeout
        while True:
            status, body = self.call("GET", f"/api/traces/{trace_id}")
            if status == 200 and len(body["data"]["spans"]) >= spans:
                data: dict[str, Any] = body["data"]
                return data
            if time.monotonic() > deadline:
                raise AssertionError(f"trace {trace_id} did not reach {spans} spans: {status} {body}")
            time.sleep(0.25)


def _postgres_server() -> str | None:
    """A PostgreSQL server URL to create the test database on, or None for the embedded one."""
    given = os.environ.get("LOUPE_TEST_DATABASE_URL")
    if given:
        return given
    local = "postgres://postgres@127.0.0.1:5432/postgres"
    if shutil.which("pg_isready") and shutil.which("psql"):
        answered = subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q"], check=False).returncode == 0
        return local if answered else None
    return None


def _psql(server: str, sql: str) -> None:
    subprocess.run(["psql", server, "-qc", sql], check=True, capture_output=True)


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    scratch = Path(tempfile.mkdtemp(prefix="loupe-python-sdk-"))
    # The embedded PostgreSQL runs as the user postgres when the tests run as root: it must be
    # able to enter the data directory's parents (mkdtemp makes them private).
    scratch.chmod(0o755)
    api_key = "lpk_python_" + secrets.token_hex(16)
    env = {
        **os.environ,
        "PORT": "0",
        "HOST": "127.0.0.1",
        "LOUPE_DATA_DIR": str(scratch / "data"),
        "LOUPE_BOOTSTRAP_API_KEY": api_key,
        "LOG_LEVEL": "info",
    }
    server = _postgres_server()
    database = None
    if server:
        database = f"loupe_python_sdk_{os.getpid()}_{secrets.token_hex(3)}"
        _psql(server, f"create database {database}")
        parts = urlsplit(server)
        env["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + database))
    child = subprocess.Popen(
        ["node", "--import", "tsx", "src/main.ts", "start"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    listening = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            output.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("msg") == "loupe is listening":
                url.append(str(entry["url"]))
                listening.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 180
        while not listening.wait(0.2):
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the service did not start:\n" + "".join(output))
        yield Service(base_url=url[0].replace("localhost", "127.0.0.1"), api_key=api_key)
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if server and database:
            _psql(server, f"drop database if exists {database} with (force)")
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class Recorded:
    errors: list[loupe.LoupeError]
    requests: list[str]


@pytest.fixture
def make_client(service: Service) -> Iterator[Callable[..., tuple[loupe.Loupe, Recorded]]]:
    """Clients of the service that record their errors and requests; shut down after the test."""
    made: list[loupe.Loupe] = []

    def make(**options: Any) -> tuple[loupe.Loupe, Recorded]:
        recorded = Recorded(errors=[], requests=[])
        base_url = options.pop("base_url", service.base_url)

        def count(request: httpx.Request) -> None:
            recorded.requests.append(f"{request.method} {request.url.path}")

        http = httpx.Client(
            base_url=base_url,
            headers={"x-api-key": service.api_key},
            timeout=10,
            event_hooks={"request": [count]},
        )
        client = loupe.Loupe(
            api_key=service.api_key,
            base_url=base_url,
            env={},
            on_error=recorded.errors.append,
            http_client=http,
            **options,
        )
        made.append(client)
        return client, recorded

    yield make
    for client in made:
        client.shutdown(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
