"""Test-only: start a real server in a subprocess on 127.0.0.1, wait until it answers, stop it."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import contextmanager

import httpx

from ktrain_recipes.studies.serve_bench import free_port, stop


@contextmanager
def running(args: list[str], health: str = "/health", timeout: float = 120.0):
    """Run ``python ARGS --port P`` (binding 127.0.0.1), yield its base URL once ``health`` answers 200."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, *args, "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {proc.stdout.read()[-2000:]}")
            try:
                if httpx.get(url + health, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > end:
                raise RuntimeError(f"server did not answer within {timeout} s")
            time.sleep(0.2)
        yield url, proc
    finally:
        stop(proc)
