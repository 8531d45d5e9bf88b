"""The service under an httpx load from this same machine: statuses, client-side p50/p99 and the server's own
queue wait (x-queue-time-ms) at concurrency 1, 8 and 128, with a small queue and in-flight bound.

    python benchmarks/service_overload.py PREDICTOR_FOLDER      # a folder with its int8 model (export)
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx

from ktrain_recipes_tools.studies.serve_bench import free_port, stop

TEXTS = ["i am so happy today", "this makes me furious", "i feel alone", "what a surprise"]
FLAGS = ["--max-queue", "16", "--max-concurrent", "8", "--timeout-ms", "2000", "--threads", "1"]


async def load(url: str, n: int, concurrency: int) -> list[tuple[int, float, float]]:
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency)) as http:
        async def one(i: int):
            async with sem:
                start = time.perf_counter()
                r = await http.post(url + "/predict", json={"texts": [TEXTS[i % 4]] * 4})
                return r.status_code, time.perf_counter() - start, float(r.headers.get("x-queue-time-ms", "nan"))
        return await asyncio.gather(*(one(i) for i in range(n)))


def main(folder: str) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ktrain_recipes", "serve", "--predictor", folder, "--port",
                             str(port), *FLAGS], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/health/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        for concurrency in (1, 8, 128):
            results = asyncio.run(load(url, 600, concurrency))
            ok = [r for r in results if r[0] == 200]
            lat = sorted(r[1] for r in ok)
            wait = sorted(r[2] for r in ok)
            counts = {s: sum(1 for r in results if r[0] == s) for s in sorted({r[0] for r in results})}
            p99 = int(0.99 * len(ok))
            print(f"c={concurrency}: {counts}; accepted p50 {1000 * lat[len(lat) // 2]:.1f} ms, p99 "
                  f"{1000 * lat[p99]:.1f} ms; server-side queue wait p99 {wait[p99]:.2f} ms")
    finally:
        stop(proc)


if __name__ == "__main__":
    main(sys.argv[1])
