"""Test-only: start a real server in a subprocess on 127.0.0.1, wait until it answers, stop it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager

import httpx

from ktrain_recipes_tools.studies.serve_bench import free_port, stop


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


CHROMIUM = Path("/usr/bin/chromium")  # Debian's: Playwright cannot download its own browser here


def chromium(playwright):
    """Debian's chromium, started by Playwright with no sandbox and no background networking (a closed network)."""
    import pytest

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `apt-get install chromium` (make test does it)")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"])
