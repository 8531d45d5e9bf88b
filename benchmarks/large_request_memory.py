"""The service's resident memory before, during and after one very large request.

One request of ``--texts`` long texts (about 2 MB in all) is sent to an int8 service started with ``--max-batch``
equal to it; the server's RSS is sampled every 50 ms while it answers, then read again 3 s after. The texts per
request (``--max-batch``) and per model call (``--max-call``, 64, and ``--max-call-tokens``, 256) are separate limits,
so the model's working memory (onnxruntime's arena keeps its peak) is one call's, whatever the request's size.

    python benchmarks/large_request_memory.py OUT.json PREDICTOR [--texts 10000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time

import httpx
import psutil

from ktrain_recipes_tools.studies.measure import describe_machine
from ktrain_recipes_tools.studies.serve_bench import free_port, stop

TEXT = ("i was so nervous before the exam that i could not sleep and my hands were shaking all morning long, "
        "i kept thinking about everything that could go wrong and ")


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def one_server(predictor: str, n: int) -> dict:
    """Start the service, read its RSS at rest, send one n-text request while sampling RSS, read it after."""
    port = free_port()
    command = [sys.executable, "-m", "ktrain_recipes", "serve", "--predictor", predictor, "--backend", "int8",
               "--port", str(port), "--max-batch", str(n), "--max-chars", "10000000", "--timeout-ms", "600000",
               "--max-body-bytes", str(64 * 2**20), "--max-queue", str(n)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=900) as http:
            for _ in range(600):
                if proc.poll() is not None:
                    raise SystemExit(f"the service did not start: {proc.stderr.read()[-2000:]}")
                try:
                    if http.get(url + "/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            http.post(url + "/predict", json={"texts": [TEXT] * 8})  # warm: one small call
            time.sleep(1)
            rest = rss_mb(proc.pid)
            peak, done = [rest], threading.Event()

            def sample():
                while not done.is_set():
                    peak.append(rss_mb(proc.pid))
                    time.sleep(0.05)

            sampler = threading.Thread(target=sample)
            sampler.start()
            texts = [f"{i} {TEXT}" for i in range(n)]
            body = json.dumps({"texts": texts}).encode()
            start = time.perf_counter()
            answer = http.post(url + "/predict", content=body, headers={"content-type": "application/json"})
            seconds = time.perf_counter() - start
            done.set()
            sampler.join()
            time.sleep(3)
            after = rss_mb(proc.pid)
        return {"texts": n, "request_mb": round(len(body) / 2**20, 2),
                "status": answer.status_code, "seconds": round(seconds, 1), "rss_mb_at_rest": round(rest, 1),
                "rss_mb_peak": round(max(peak), 1), "rss_mb_after": round(after, 1),
                "after_minus_rest_mb": round(after - rest, 1)}
    finally:
        stop(proc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("predictor")
    parser.add_argument("--texts", type=int, default=10_000)
    args = parser.parse_args(argv)
    result = {"machine": describe_machine(), "command": "python benchmarks/large_request_memory.py "
              f"{args.out} PREDICTOR --texts {args.texts}", **one_server(args.predictor, args.texts)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
