"""
Decorator overhead per span: ``@observe`` against the same bare function, in the same run.

Three figures, each the median of several rounds (the machine is shared, so only same-run
ratios mean anything):
- bare: the undecorated function;
- observed, sending off: a client without an API key (spans made and ended, nothing queued);
- observed, sending: spans queued to the background thread, which sends them meanwhile to an
  HTTP server in another process; the thread's share of the interpreter during the loop is
  counted, the wait for the rest to be sent (a flush between rounds) is not: the application
  does not wait for it either. That wait is reported apart, as spans sent per second.

On a loaded machine the wall-clock figures swing with the other processes, so the interpreter's
CPU time per span is reported too (both threads, the flush included; the sink is another
process): ``cpu_sending_us - cpu_sending_off_us`` is what queueing and sending a span costs,
most of it on the background thread, which holds the interpreter meanwhile.

Usage: python bench/decorator_overhead.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import loupe

# The sink runs in a process of its own, as the service would: only the client's work is timed.
_SINK = """
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the service answers

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: without this, each answer waits for a delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"data":{"accepted":1,"rejected":0,"errors":[]}}'
        self.send_response(202)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def answer(question: str, n: int) -> int:
    return len(question) + n


def per_call_us(fn: Callable[[str, int], Any], calls: int, after: Callable[[], object] = lambda: None) -> float:
    start = time.perf_counter_ns()
    for i in range(calls):
        fn("is my kettle covered?", i)
    after()
    return (time.perf_counter_ns() - start) / calls / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    sink = subprocess.Popen([sys.executable, "-c", _SINK], stdout=subprocess.PIPE, text=True)
    assert sink.stdout is not None
    port = sink.stdout.readline().strip()
    if not port.isdigit():
        raise SystemExit("the sink server did not start")
    base_url = f"http://127.0.0.1:{port}"

    quiet = loupe.Loupe(env={})
    sending = loupe.Loupe(env={}, api_key="lpk_benchmark_key_000000", base_url=base_url, max_queue_size=1_000_000)
    observed_quiet = quiet.observe(kind="tool")(answer)
    observed_sending = sending.observe(kind="tool")(answer)

    bare: list[float] = []
    off: list[float] = []
    on: list[float] = []
    drain: list[float] = []
    cpu_off: list[float] = []
    cpu_on: list[float] = []
    per_call_us(observed_sending, 500, sending.flush)  # warm up: the thread, the connection
    for _ in range(args.rounds):
        bare.append(per_call_us(answer, args.calls))
        cpu = time.process_time()
        off.append(per_call_us(observed_quiet, args.calls))
        cpu_off.append((time.process_time() - cpu) / args.calls * 1e6)
        start, cpu = time.perf_counter(), time.process_time()
        on.append(per_call_us(observed_sending, args.calls))
        sending.flush()
        drain.append(args.calls / (time.perf_counter() - start))
        cpu_on.append((time.process_time() - cpu) / args.calls * 1e6)
    stats = sending.stats()
    sending.shutdown()
    sink.terminate()
    sink.wait()

    b, f, s = statistics.median(bare), statistics.median(off), statistics.median(on)
    result = {
        "calls": args.calls,
        "rounds": args.rounds,
        "bare_us": round(b, 3),
        "observed_sending_off_us": round(f, 2),
        "observed_sending_us": round(s, 2),
        "overhead_sending_off_us": round(f - b, 2),
        "overhead_sending_us": round(s - b, 2),
        "spans_sent_per_s": round(statistics.median(drain)),
        "cpu_sending_off_us": round(statistics.median(cpu_off), 2),
        "cpu_sending_us": round(statistics.median(cpu_on), 2),
        "sent": stats.sent,
        "dropped": stats.dropped,
        "goal_us": 50,
    }
    print(
        f"bare function: {b:.3f} µs/call; @observe, sending off: {f:.2f} µs ({f - b:.2f} µs overhead); "
        f"@observe, sending: {s:.2f} µs ({s - b:.2f} µs overhead, goal ≤ 50 µs); "
        f"{stats.sent} spans sent ({statistics.median(drain):.0f} a second), {stats.dropped} dropped; "
        f"CPU per span {statistics.median(cpu_off):.2f} µs sending off, {statistics.median(cpu_on):.2f} µs sending"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
