"""``serve-bench``: requests/s, latency percentiles and resident memory of HTTP servers for one predictor,
measured in one run on one machine:

(a) ktrain's FAQ deployment: Flask around ``ktrain.load_predictor``, one text per ``GET /predict?text=``
(``faq_flask``);
(b) our service (``serve``) with the ktrain backend;
(c) our service with the int8 ONNX backend and micro-batching;
(d, e) the same service on Ray Serve (``serve --engine ray``) with 1 and 2 replicas;
(f) the single-process int8 service overloaded: 256 clients against a small queue (``--max-queue 32 --max-batch 32``);
(g) (c) serving a copy of the predictor that records a temperature, every request asking ``min_confidence`` 0.9:
    what scaling and withholding cost.

Every level counts the answers by status: 429 and 503 are the service refusing work it cannot take in time;
any other non-2xx is a failure.

Each server runs in its own process on 127.0.0.1. The load comes from ``wrk`` (a C load generator: a Python
client tops out near 200 requests/s at 32 connections on a 2-core machine, below what it is measuring), one
text per request, for a fixed time per level; wrk's Lua hooks report every percentile and the non-200 answers.
"""

import json
import os
import re
import socket
import subprocess
import tempfile
import sys
import time
from pathlib import Path


from ktrain_recipes import compat  # noqa: F401
from ktrain_recipes_tools.studies.measure import describe_machine, process_rss_mb
from ktrain_recipes.versions import cpu_features
from ktrain_recipes.errors import RecipesError
from ktrain_recipes_tools.studies.latency_by_length import by_length

SERVERS = {
    "a_flask_ktrain_faq": "Flask + ktrain.load_predictor (ktrain FAQ)",
    "b_service_ktrain": "our service, ktrain backend",
    "c_service_int8": "our service, int8 ONNX + micro-batching",
    "d_ray_serve_1": "our service on Ray Serve, 1 replica (int8)",
    "e_ray_serve_2": "our service on Ray Serve, 2 replicas (int8)",
    "f_overload": "our service, int8, overloaded (--max-queue 32, --max-batch 32, --max-concurrent 64)",
    "g_service_int8_calibrated": "our service, int8, a temperature recorded and min_confidence 0.9 in every request",
}
OVERLOAD = 256  # clients at the overload level (f)
TEXT_SETS = {"short": "six short sentences in turn (6 to 11 tokens)",
             "emotion": "the emotion slice's validation texts in turn (a real mix of lengths)"}
TEXTS = ["i feel so happy and relaxed today", "i am terrified of what comes next", "i feel so alone and miserable",
         "this makes me furious", "i was amazed to see how much had changed", "i love the way you laugh"]


def emotion_texts(n: int = 400) -> list[str]:
    """Validation texts of the emotion slice the package ships, a real mix of lengths (the ``--texts emotion`` load);
    only those wrk's script can carry as they are (letters, digits, spaces and plain punctuation)."""
    from ktrain_recipes.data.loading import load_emotion

    texts = [t for t in load_emotion().texts("validation") if re.fullmatch(r"[a-z0-9 ,.']+", t)]
    return texts[:n]


def stop(proc: subprocess.Popen, timeout: float = 20) -> None:
    """Terminate a server process; kill it if it does not exit in time."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _command(name: str, predictor: str, port: int) -> list[str]:
    if name == "a_flask_ktrain_faq":
        return [sys.executable, "-m", "ktrain_recipes_tools.studies.faq_flask", predictor, str(port)]
    backend = "ktrain" if name == "b_service_ktrain" else "int8"
    command = [sys.executable, "-m", "ktrain_recipes", "serve", "--predictor", predictor, "--backend", backend,
               "--host", "127.0.0.1", "--port", str(port), "--reload-interval", "0"]
    if name in ("d_ray_serve_1", "e_ray_serve_2"):  # one model thread per replica, as (c) has one
        command += ["--engine", "ray", "--replicas", name[-1], "--threads", "1"]
    if name == "f_overload":
        command += ["--max-queue", "32", "--max-batch", "32", "--max-concurrent", "64"]
    return command


def _request(name: str, url: str, http, text: str):
    if name == "a_flask_ktrain_faq":
        return http.get(url + "/predict", params={"text": text})
    return http.post(url + "/predict", json={"texts": [text], **WITHHOLD.get(name, {})})


WITHHOLD = {"g_service_int8_calibrated": {"min_confidence": 0.9}}  # the request field each server's load sends


WRK_SCRIPT = Path(__file__).with_name("serve_bench.lua")  # wrk's Lua hooks: the texts, statuses, percentiles


def _level(name: str, url: str, concurrency: int, seconds: float, texts: list[str] = TEXTS) -> dict:
    """wrk at ``concurrency`` connections for ``seconds``, each request one of ``texts`` in turn: good requests/s,
    latency percentiles, failures; for our service, the latency by length from its /metrics."""
    import shutil
    import tempfile

    import httpx

    wrk = shutil.which("wrk")
    if wrk is None:
        raise RecipesError("serve-bench needs wrk, the HTTP load generator: `apt-get install wrk`")
    lua = WRK_SCRIPT.read_text().replace("{TEXTS}", "{" + ", ".join(json.dumps(t) for t in texts) + "}").replace(
        "MODE", json.dumps("get" if name == "a_flask_ktrain_faq" else "post")).replace(
        "{EXTRA}", "".join(f', "{k}": {v}' for k, v in WITHHOLD.get(name, {}).items()))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(lua)
    scrape = name in ("b_service_ktrain", "c_service_int8", "f_overload", *WITHHOLD)  # our single-process service
    before = httpx.get(url + "/metrics").text if scrape else ""
    try:
        run = subprocess.run([wrk, "-t", "1", "-c", str(concurrency), "-d", f"{seconds:g}s", "--timeout", "20s",
                              "-s", f.name, url], capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(f.name)
    line = next((x for x in run.stdout.splitlines() if x.startswith("WRK ")), None)
    if line is None:
        raise RecipesError(f"wrk gave no figures for {name}: {run.stdout[-300:]} {run.stderr[-300:]}")
    total, bad, duration, p50, p95, p99 = line.split()[1:]
    total, bad, duration = int(total), int(bad), float(duration)
    statuses = {}
    for status_line in run.stdout.splitlines():
        if status_line.startswith("STATUS "):
            code, n = status_line.split()[1:]
            statuses[code] = statuses.get(code, 0) + int(n)
    refused = statuses.get("429", 0) + statuses.get("503", 0)
    lengths = {"by_length": by_length(before, httpx.get(url + "/metrics").text)} if scrape else {}
    return {"concurrency": concurrency, "requests": total, "failures": bad - refused,
            "refused_429": statuses.get("429", 0), "refused_503": statuses.get("503", 0), "statuses": statuses,
            "good_rps": round((total - bad) / duration, 1), "p50_ms": round(float(p50), 2),
            "p95_ms": round(float(p95), 2), "p99_ms": round(float(p99), 2), **lengths}


def wait_ready(name: str, url: str, proc: subprocess.Popen, log=None, timeout: float = 180) -> None:
    import httpx

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            why = ""
            if log is not None:
                log.seek(0)
                lines = [ln.strip() for ln in log.read().splitlines() if ln.strip()]
                why = f": {lines[-1][:300]}" if lines else ""
            raise RecipesError(f"{name} exited with {proc.returncode} before answering{why}")
        try:
            response = _request(name, url, httpx, TEXTS[0])
            if response.status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RecipesError(f"{name} did not answer within {timeout} s")


def bench_server(name: str, predictor: str, concurrencies: list[int], seconds: float,
                 texts: list[str] = TEXTS) -> dict:
    """Start one server, warm it up, read its resident memory at rest, then load it at each concurrency."""

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # the server's own stderr goes to a file, so that a server that exits before answering is told with its reason
    # (a missing extra, a refused folder: battery v7, X6), not only its exit status
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(_command(name, predictor, port), stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_ready(name, url, proc, log)
        _level(name, url, 4, 3)  # warm-up: graphs built, caches filled
        time.sleep(1)
        rss = process_rss_mb(proc.pid, children=True) * 2**20
        levels = []
        for c in [OVERLOAD] if name == "f_overload" else concurrencies:
            levels.append(_level(name, url, c, seconds, texts))
            print(f"{name} c={c}: {levels[-1]}", file=sys.stderr)
    finally:
        stop(proc)
        log.close()
    return {"server": name, "what": SERVERS[name], "rss_mb_at_rest": round(rss / 1e6, 1), "levels": levels}


def run_serve_bench(predictor: str, out: str = "docs", assets: str = "assets", concurrencies=(1, 8, 32, 64),
                    seconds: float = 20.0, servers=tuple(SERVERS), texts: str = "short") -> dict:
    """Bench the servers (see the module's docstring); write serve_bench.json/.md and a chart."""
    from ktrain_recipes.predictor.saved import read_predictor

    if "int8" not in read_predictor(predictor).backends:  # a bad folder fails here, before any server starts
        raise RecipesError(f"'{predictor}' has no int8 ONNX model: run `ktrain-recipes export --predictor "
                           f"{predictor}` first")
    if texts not in TEXT_SETS:
        raise RecipesError(f"texts must be one of {', '.join(TEXT_SETS)}, got {texts!r}")
    load = TEXTS if texts == "short" else emotion_texts()
    from ktrain_recipes_tools.studies.calibration import calibrated_copy

    from contextlib import nullcontext

    copying = any(name in WITHHOLD for name in servers)
    with calibrated_copy(predictor) if copying else nullcontext(predictor) as calibrated:  # (g): a copy with one
        rows = [bench_server(name, calibrated if name in WITHHOLD else predictor, list(concurrencies), seconds, load)
                for name in servers]
    result = {"predictor": str(predictor), "load": "wrk -t 1 -c CONCURRENCY", "texts": TEXT_SETS[texts],
              "latency": "percentiles of every answer, refusals (429/503) included", "seconds_per_level": seconds,
              "cpu": describe_machine(), "cpu_features": cpu_features(), "servers": rows, "targets": targets(rows)}
    Path(out).mkdir(parents=True, exist_ok=True)
    Path(out, "serve_bench.json").write_text(json.dumps(result, indent=2))
    Path(out, "serve_bench.md").write_text(markdown(result))
    Path(assets).mkdir(parents=True, exist_ok=True)
    chart(rows, Path(assets, "serve_bench.png"))
    print(markdown(result))
    return result


def _at(row: dict, c: int) -> dict:
    return next(level for level in row["levels"] if level["concurrency"] == c)


def targets(rows: list[dict]) -> dict:
    """The targets, from this run's figures (each needs the servers it compares)."""
    by_name = {row["server"]: row for row in rows}
    out = {}
    c, e = by_name.get("c_service_int8"), by_name.get("e_ray_serve_2")
    if c and e and all(any(level["concurrency"] == 32 for level in r["levels"]) for r in (c, e)):
        ratio = _at(e, 32)["good_rps"] / max(_at(c, 32)["good_rps"], 1e-9)
        out["c32_rps_ratio_ray2_over_c"] = {"value": round(ratio, 2), "target": ">= 0.8", "met": ratio >= 0.8}
    if "f_overload" in by_name:
        level = by_name["f_overload"]["levels"][0]
        out["overload_other_non_2xx"] = {"value": level["failures"], "target": "0", "met": level["failures"] == 0}
    if not {"a_flask_ktrain_faq", "c_service_int8"} <= set(by_name):
        return out
    a = by_name["a_flask_ktrain_faq"]
    if any(level["concurrency"] == 32 for level in a["levels"]):
        ratio = _at(c, 32)["good_rps"] / max(_at(a, 32)["good_rps"], 1e-9)
        out["c32_rps_ratio_c_over_a"] = {"value": round(ratio, 1), "target": ">= 25", "met": ratio >= 25}
        out["c32_p99_ms_c"] = {"value": _at(c, 32)["p99_ms"], "target": "<= 100", "met": _at(c, 32)["p99_ms"] <= 100}
    if any(level["concurrency"] == 1 for level in c["levels"]):
        out["c1_p50_ms_c"] = {"value": _at(c, 1)["p50_ms"], "target": "<= 5", "met": _at(c, 1)["p50_ms"] <= 5}
    mem = c["rss_mb_at_rest"] / a["rss_mb_at_rest"]
    out["rss_ratio_c_over_a"] = {"value": round(mem, 2), "target": "<= 0.33", "met": mem <= 1 / 3}
    return out


def markdown(result: dict) -> str:
    lines = ["| server | RSS at rest (MB) | concurrency | good req/s | p50 ms | p95 ms | p99 ms | refused 429/503 | "
             "failures |", "|---|---|---|---|---|---|---|---|---|"]
    for row in result["servers"]:
        for i, level in enumerate(row["levels"]):
            head = f"{row['what']} | {row['rss_mb_at_rest']}" if i == 0 else " | "
            refused = f"{level.get('refused_429', 0)}/{level.get('refused_503', 0)}"
            lines.append(f"| {head} | {level['concurrency']} | {level['good_rps']} | {level['p50_ms']} | "
                         f"{level['p95_ms']} | {level['p99_ms']} | {refused} | "
                         f"{level['failures']}/{level['requests']} |")
    lines += ["", "| target | this run | goal | met |", "|---|---|---|---|"]
    for name, t in result["targets"].items():
        lines.append(f"| {name} | {t['value']} | {t['target']} | {'yes' if t['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def chart(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for row in rows:
        cs = [level["concurrency"] for level in row["levels"]]
        left.plot(cs, [level["good_rps"] for level in row["levels"]], marker="o", label=row["what"])
        right.plot(cs, [level["p99_ms"] for level in row["levels"]], marker="o", label=row["what"])
    for ax, title in [(left, "good requests/s (one text each)"), (right, "p99 latency (ms)")]:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    left.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

