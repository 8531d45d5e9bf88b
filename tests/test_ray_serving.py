"""`serve --engine ray`: the same app as a Ray Serve deployment with 2 replicas, on a local Ray, passes the same API
tests as the single-process service: answers, one-line JSON errors, isolation, the body limit, health, HEAD,
metrics, and a clean stop on SIGTERM with requests in flight. One server for the module (Ray takes ~20 s to start);
the SIGTERM test stops it, last. Listens on 127.0.0.1 only."""

import asyncio
import json
import signal

import httpx
import pytest
from fastapi.testclient import TestClient

from ktrain_recipes_tools import cli
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings
from servers import running

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.network]

pytest.importorskip("ray.serve", reason="Ray Serve is in requirements-dev.txt")

TEXTS = ["i am so happy today", "this makes me furious", "i feel alone", "what a surprise"]


@pytest.fixture(scope="module")
def ray_server(exported):
    args = ["-m", "ktrain_recipes", "serve", "--predictor", str(exported), "--engine", "ray", "--replicas", "2",
            "--threads", "1", "--max-body-bytes", "5000", "--max-chars", "200", "--max-batch", "8"]
    with running(args, health="/health/ready", timeout=240) as (url, proc):
        yield url, proc


def test_ray_serve_answers_as_the_single_process_service(ray_server, exported):
    url, _ = ray_server
    with TestClient(create_app(ServiceSettings(str(exported), reload_interval=0))) as local:
        for text in TEXTS:
            ours = httpx.post(url + "/predict", json={"texts": [text]}, timeout=30).json()["predictions"][0]
            theirs = local.post("/predict", json={"texts": [text]}).json()["predictions"][0]
            assert ours["label"] == theirs["label"]
            for name, p in theirs["probabilities"].items():
                assert abs(ours["probabilities"][name] - p) < 1e-5


@pytest.mark.parametrize("body, status, words", [
    (b"not json", 400, "not valid JSON"),
    (b"{}", 422, "exactly one of"),
    (b'{"texts": []}', 422, "is empty"),
    (b'{"texts": ["   "]}', 422, "only whitespace"),
    (b'{"pairs": [["a", "b"]]}', 422, "classifies single texts"),
    (json.dumps({"texts": ["ok"] * 9}).encode(), 422, "at most 8"),
    (json.dumps({"texts": ["x" * 201]}).encode(), 422, "over the limit of 200"),
    (json.dumps({"texts": ["x" * 6000]}).encode(), 413, "over 5000 bytes"),
])
def test_bad_input_is_a_one_line_json_4xx_on_ray_too(ray_server, body, status, words):
    url, _ = ray_server
    r = httpx.post(url + "/predict", content=body, headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == status, r.text
    assert words in r.json()["error"] and "\n" not in r.json()["error"]


def test_a_lone_surrogate_fails_only_its_own_request_across_replicas(ray_server):
    url, _ = ray_server

    async def load():
        async with httpx.AsyncClient(timeout=60) as http:
            async def one(i):
                text = "bad \ud800 text" if i == 30 else TEXTS[i % len(TEXTS)]
                body = json.dumps({"texts": [text]}, ensure_ascii=True)
                r = await http.post(url + "/predict", content=body, headers={"content-type": "application/json"})
                return i, r.status_code
            return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(60))), 120)

    statuses = dict(asyncio.run(load()))
    assert statuses.pop(30) == 422 and set(statuses.values()) == {200}


def test_a_chunked_body_over_the_limit_is_refused_on_ray_too(ray_server):
    url, _ = ray_server

    def chunks():
        for _ in range(100):
            yield b" " * 1000

    r = httpx.post(url + "/predict", content=chunks(), headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 413 and "over 5000 bytes" in r.json()["error"]


def test_health_head_request_id_metrics_and_page_on_ray(ray_server):
    from prometheus_client.parser import text_string_to_metric_families

    url, _ = ray_server
    assert httpx.get(url + "/health/live").json() == {"status": "live"}
    for path in ("/", "/health", "/health/ready", "/metadata", "/metrics", "/docs"):
        assert httpx.head(url + path, timeout=30).status_code == 200, path
    r = httpx.post(url + "/predict", json={"texts": TEXTS}, headers={"x-request-id": "abc-123"}, timeout=30)
    assert r.headers.get_list("x-request-id") == ["abc-123"]  # once: Ray's proxy sets it, the app does not
    assert float(r.headers["x-inference-time-ms"]) > 0
    text = httpx.get(url + "/metrics", timeout=30).text
    samples = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert {"ktrain_recipes_requests_total", "ktrain_recipes_model_calls_total",
            "ktrain_recipes_serving_info"} <= samples
    assert 'id="classify"' in httpx.get(url + "/", timeout=30).text


@pytest.mark.parametrize("flags, words", [
    (["--replicas", "2"], "--replicas and --ray-address are for --engine ray"),
    (["--engine", "ray", "--replicas", "0"], "--replicas must be a whole number from 1"),
    (["--engine", "ray", "--replicas", "64", "--threads", "1"], "needs 64 CPUs"),
    (["--engine", "ray", "--ray-address", "nowhere"], "is not HOST:PORT"),
    (["--engine", "spark"], "--engine must be one of local, ray"),
])
def test_bad_ray_settings_fail_in_one_line_before_ray_starts(exported, capsys, flags, words):
    assert cli.main(["serve", "--predictor", str(exported), *flags]) == 1
    err = capsys.readouterr().err
    assert words in err and "serving" not in err and err.count("\n") == 1


def test_z_sigterm_answers_requests_in_flight_and_stops_ray_cleanly(ray_server):
    """Last in the module: it stops the server."""
    url, proc = ray_server

    async def during_stop():
        async with httpx.AsyncClient(timeout=60) as http:
            # the 12 connections open first (on a busy CPU, opening one can take longer than the wait below), so
            # the requests are in the server, not in a handshake, when the signal comes
            await asyncio.gather(*(http.get(url + "/health/live") for _ in range(12)))
            inflight = [asyncio.create_task(http.post(url + "/predict", json={"texts": TEXTS * 2}))
                        for _ in range(12)]
            await asyncio.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            return [r.status_code for r in await asyncio.gather(*inflight)]

    assert asyncio.run(during_stop()) == [200] * 12
    code = proc.wait(timeout=90)
    output = proc.stdout.read()
    assert code in (0, -signal.SIGTERM, 143), output[-2000:]
    assert "Traceback" not in output, output[-2000:]
