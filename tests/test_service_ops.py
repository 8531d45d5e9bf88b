"""The service as operators need it: isolation between requests, bounds, readiness and drain, metrics, an API key,
CORS, request ids and timing headers. Real servers listen on 127.0.0.1 only and are stopped by their PID."""

import asyncio
import json
import re
import signal
import socket

import httpx
import pytest
from fastapi.testclient import TestClient

from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings
from servers import chromium, running

TEXTS = ["i am so happy today", "this makes me furious", "i feel alone", "what a surprise"]


@pytest.fixture()
def client(exported):
    with TestClient(create_app(ServiceSettings(str(exported), reload_interval=0))) as c:
        yield c


def serve_args(exported, *flags):
    return ["-m", "ktrain_recipes", "serve", "--predictor", str(exported), *flags]


# isolation: a text the tokenizer cannot take is refused before it joins a batch; others are answered
@pytest.mark.network
def test_a_lone_surrogate_fails_only_its_own_request_under_concurrency(exported):
    async def load(url):
        async with httpx.AsyncClient(timeout=30) as http:
            async def one(i):
                text = "bad \ud800 text" if i == 30 else TEXTS[i % len(TEXTS)]
                body = json.dumps({"texts": [text]}, ensure_ascii=True)  # the escape reaches the server as is
                r = await http.post(url + "/predict", content=body, headers={"content-type": "application/json"})
                return i, r.status_code, r.json()
            return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(60))), 120)

    with running(serve_args(exported, "--max-wait-ms", "20")) as (url, proc):
        results = asyncio.run(load(url))
    statuses = {i: status for i, status, _ in results}
    assert statuses.pop(30) == 422 and set(statuses.values()) == {200}
    bad = next(body for i, _, body in results if i == 30)
    assert "lone surrogate" in bad["error"] and "\n" not in bad["error"]


def test_the_batch_is_split_on_failure_within_one_model_call(exported):
    from ktrain_recipes_tools.service.batcher import ModelCallFailed

    app = create_app(ServiceSettings(str(exported), reload_interval=0, max_wait_ms=200))
    batcher = app.state.batcher
    real = batcher.model.classifier.predict_proba
    calls = []

    def fussy(texts):
        calls.append(len(texts))
        if "poison" in texts:
            raise RuntimeError("cannot read this text")
        return real(texts)

    batcher.model.classifier.predict_proba = fussy

    async def scenario():
        runner = asyncio.create_task(batcher.run())
        while batcher.queue is None:
            await asyncio.sleep(0)
        jobs = [batcher.predict(["poison"] if i == 2 else [TEXTS[i % 4]]) for i in range(6)]
        results = await asyncio.gather(*jobs, return_exceptions=True)
        runner.cancel()
        return results

    results = asyncio.run(scenario())
    assert isinstance(results[2], ModelCallFailed)
    assert all(not isinstance(r, Exception) for i, r in enumerate(results) if i != 2)
    assert calls[0] == 6 and sorted(calls[1:]) == [1] * 6  # one joint call failed, then one call per request


# bounds: the body limit as the body streams in
@pytest.mark.network
def test_a_chunked_body_over_the_limit_is_refused(exported):
    def chunks():
        for _ in range(200):
            yield b" " * 10_000  # 2 MB, sent without a Content-Length

    with running(serve_args(exported, "--max-body-bytes", "100000")) as (url, proc):
        r = httpx.post(url + "/predict", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "over 100000 bytes" in r.json()["error"]
        assert httpx.get(url + "/health/ready").status_code == 200


# bounds: past --max-concurrent requests or --max-queue texts, 429; past the deadline, 503; both with Retry-After;
# never another 5xx. What the server controls, the time an accepted request waits for the model, stays bounded.
# (The client-side latency under overload also holds the HTTP layer's own queue, where this test's client and the
# server share two cores: serve-bench measures it with wrk, from outside.)
@pytest.mark.network
def test_overload_gets_only_200_429_and_503_and_accepted_requests_wait_a_bounded_time(exported):
    async def load(url, n, concurrency):
        sem = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency)) as http:
            async def one(i):
                async with sem:
                    r = await http.post(url + "/predict", json={"texts": [TEXTS[i % 4]] * 4})
                    return r.status_code, float(r.headers.get("x-queue-time-ms", "nan")), r.headers.get("retry-after")
            return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(n))), 180)

    def p99(values):
        return sorted(values)[int(0.99 * len(values))]

    flags = ("--max-queue", "16", "--max-batch", "16", "--max-concurrent", "8", "--timeout-ms", "2000",
             "--threads", "1")
    with running(serve_args(exported, *flags)) as (url, _):
        at_capacity = asyncio.run(load(url, 200, 8))
        overload = asyncio.run(load(url, 1000, 128))
    statuses = [s for s, _, _ in overload]
    assert set(statuses) <= {200, 429, 503} and 429 in statuses and 200 in statuses
    assert all(retry == "1" for s, _, retry in overload if s in (429, 503))
    waited = p99([q for s, q, _ in overload if s == 200])
    assert waited <= max(4 * p99([q for s, q, _ in at_capacity if s == 200]), 50.0), waited


# drain: SIGTERM answers what is in flight, turns not-ready, and exits cleanly
@pytest.mark.network
def test_sigterm_drains_requests_in_flight_and_exits_cleanly(exported):
    """While the requests in flight are answered, the service still listens: a readiness probe on a new
    connection reads 503 (a load balancer takes the replica out), and a /predict that still arrives is answered."""
    async def during_drain(url, proc):
        async with httpx.AsyncClient(timeout=30) as http:
            inflight = [asyncio.create_task(http.post(url + "/predict", json={"texts": TEXTS * 1000}))
                        for _ in range(8)]
            for _ in range(500):  # until requests wait in the queue behind a model call (one request per call)
                metrics = (await http.get(url + "/metrics")).text
                if float(re.search(r"^ktrain_recipes_queue_texts (\S+)", metrics, re.M)[1]) >= 8000:
                    break
                await asyncio.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)  # the drain begins at uvicorn's next tick (every 0.1 s)
            async with httpx.AsyncClient(timeout=10) as other:  # new connections, as a probe makes
                ready = await other.get(url + "/health/ready")
                late = await other.post(url + "/predict", json={"texts": TEXTS[:1]})
            answered = await asyncio.gather(*inflight)
            return [r.status_code for r in answered], ready, late

    # 8 model calls of 4,000 texts each on one thread: requests are still in flight when the probe comes
    with running(serve_args(exported, "--drain-s", "20", "--max-batch", "4000", "--max-queue", "40000",
                                     "--threads", "1")) as (url, proc):
        statuses, ready, late = asyncio.run(during_drain(url, proc))
        code = proc.wait(timeout=30)
        output = proc.stdout.read()
    assert statuses == [200] * 8
    assert ready.status_code == 503 and ready.headers["retry-after"] and "draining" in ready.json()["error"]
    assert late.status_code == 200 and late.json()["predictions"][0]["label"]
    assert code in (0, -signal.SIGTERM, 143) and "Traceback" not in output


@pytest.mark.network
def test_a_second_sigterm_during_a_drain_answers_json_and_logs_no_traceback(exported):
    """5 of 8 requests in flight got plain-text 500s and the log CancelledError tracebacks: each now gets its answer
    or a JSON 503 with Retry-After (or its connection closes), and the service stops within seconds."""
    import time

    async def twice(url, proc):
        async with httpx.AsyncClient(timeout=60) as http:
            inflight = [asyncio.create_task(http.post(url + "/predict", json={"texts": TEXTS * 1000}))
                        for _ in range(8)]
            for _ in range(500):  # until requests wait in the queue behind a model call
                metrics = (await http.get(url + "/metrics")).text
                if float(re.search(r"^ktrain_recipes_queue_texts (\S+)", metrics, re.M)[1]) >= 8000:
                    break
                await asyncio.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)  # draining
            proc.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            return await asyncio.gather(*inflight, return_exceptions=True), stopped

    with running(serve_args(exported, "--drain-s", "60", "--max-batch", "4000", "--max-queue", "40000",
                            "--threads", "1")) as (url, proc):
        answers, stopped = asyncio.run(twice(url, proc))
        code = proc.wait(timeout=30)
        took = time.monotonic() - stopped
        output = proc.stdout.read()
    answered = [a for a in answers if isinstance(a, httpx.Response)]
    assert all(isinstance(a, httpx.TransportError) for a in answers if not isinstance(a, httpx.Response)), answers
    assert all(a.status_code in (200, 503) and a.headers["content-type"] == "application/json" for a in answered), \
        [(a.status_code, a.text[:80]) for a in answered]
    assert any(a.status_code == 503 and "shutting down" in a.json()["error"] and a.headers["retry-after"]
               for a in answered)
    assert "Traceback" not in output and "CancelledError" not in output, output[-2000:]
    assert code in (0, -signal.SIGTERM, 143) and took < 10


@pytest.mark.network
def test_a_second_sigterm_stops_at_once(exported):
    """A client still sending its body keeps the drain waiting (up to --body-timeout-s); a second SIGTERM ends it."""
    import subprocess
    import time
    from urllib.parse import urlsplit

    with running(serve_args(exported, "--body-timeout-s", "120")) as (url, proc):
        where = urlsplit(url)
        with socket.create_connection((where.hostname, where.port), timeout=10) as slow:
            slow.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"texts\": [")  # and no more
            time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)
            with pytest.raises(subprocess.TimeoutExpired):
                proc.wait(timeout=2)  # the drain waits for the slow body
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=5)  # not the --drain-s (10 s) nor the body deadline
    assert code in (0, -signal.SIGTERM, 143)


def test_requests_still_waiting_when_the_drain_time_runs_out_get_json_503(exported):
    """At the end of --drain-s the service sheds what still waits for a model call (``MicroBatcher.shed``): each
    such request gets JSON 503 with Retry-After, not uvicorn's plain-text 500 from a cancelled task."""
    app = create_app(ServiceSettings(str(exported), reload_interval=0))
    batcher = app.state.batcher

    async def scenario():
        batcher.queue = asyncio.Queue()  # no worker runs: every request waits, as behind a long model call
        waiting = [asyncio.create_task(batcher.predict([TEXTS[0]], batcher.model)) for _ in range(5)]
        await asyncio.sleep(0)
        shed = batcher.shed()
        return shed, await asyncio.gather(*waiting, return_exceptions=True)

    from ktrain_recipes_tools.service.batcher import ShuttingDown

    shed, results = asyncio.run(scenario())
    assert shed == 5 and all(isinstance(r, ShuttingDown) for r in results) and batcher.waiting == 0

    async def shut(*args, **kwargs):
        raise ShuttingDown("the service is shutting down")

    batcher.predict = shut
    with TestClient(app) as client:
        r = client.post("/predict", json={"texts": TEXTS})
    assert r.status_code == 503 and r.headers["retry-after"] and "shutting down" in r.json()["error"]


# operations: liveness, readiness, HEAD, metrics, request ids, timing headers
def test_health_head_request_id_and_timing_headers(client):
    assert client.get("/health/live").json() == {"status": "live"}
    assert client.get("/health/ready").json()["status"] == "ready"
    for path in ("/", "/health", "/health/live", "/health/ready", "/metadata", "/metrics"):
        assert client.head(path).status_code == 200, path
    r = client.post("/predict", json={"texts": TEXTS}, headers={"x-request-id": "abc-123"})
    assert r.headers["x-request-id"] == "abc-123"
    assert float(r.headers["x-queue-time-ms"]) >= 0 and float(r.headers["x-inference-time-ms"]) > 0
    assert len(client.get("/health").headers["x-request-id"]) == 32  # made when the client sent none


def test_metrics_parse_and_move_with_traffic(client):
    from prometheus_client.parser import text_string_to_metric_families

    def samples():
        text = client.get("/metrics").text
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(text) for s in family.samples}

    before = samples()
    # every outcome's series exists from the start, at 0 until it happens (and on every Ray Serve replica)
    assert before[("ktrain_recipes_model_calls_total", (("outcome", "failed"),))] == 0
    assert before[("ktrain_recipes_reloads_total", (("outcome", "failed"),))] == 0
    for _ in range(3):
        assert client.post("/predict", json={"texts": TEXTS}).status_code == 200
    assert client.post("/predict", json={"texts": [""]}).status_code == 422
    after = samples()
    ok = ("ktrain_recipes_requests_total", (("route", "/predict"), ("status", "200")))
    bad = ("ktrain_recipes_requests_total", (("route", "/predict"), ("status", "422")))
    assert after[ok] - before.get(ok, 0) == 3 and after[bad] - before.get(bad, 0) == 1
    calls = ("ktrain_recipes_model_calls_total", (("outcome", "ok"),))
    assert after[calls] - before.get(calls, 0) == 3
    assert after[("ktrain_recipes_batch_texts_sum", ())] - before.get(("ktrain_recipes_batch_texts_sum", ()), 0) == 12
    assert any(name == "ktrain_recipes_serving_info" for name, _ in after)


def test_an_api_key_is_required_where_set_and_never_echoed(exported, tmp_path):
    (tmp_path / "key").write_text("s3cret-key\n")
    app = create_app(ServiceSettings(str(exported), reload_interval=0, api_key_file=str(tmp_path / "key")))
    with TestClient(app) as c:
        r = c.post("/predict", json={"texts": TEXTS})
        assert r.status_code == 401 and "s3cret" not in r.text and r.headers["www-authenticate"] == "Bearer"
        assert c.post("/predict", json={"texts": TEXTS}, headers={"authorization": "Bearer wrong"}).status_code == 401
        ok = c.post("/predict", json={"texts": TEXTS}, headers={"authorization": "Bearer s3cret-key"})
        assert ok.status_code == 200
        assert c.get("/health/ready").status_code == 200  # health checks need no key
        # and, without it, say nothing of what is served: no folder, labels, save id or digest
        for path in ("/health", "/health/ready"):
            answer = c.get(path)
            assert answer.status_code == 200 and "model" not in answer.json()
            assert str(exported) not in answer.text and "manifest_sha256" not in answer.text
        assert "s3cret" not in c.get("/metadata", headers={"authorization": "Bearer s3cret-key"}).text


def test_cors_allows_only_the_listed_origins(exported):
    app = create_app(ServiceSettings(str(exported), reload_interval=0, cors_origin="https://ok.example"))
    with TestClient(app) as c:
        good = c.options("/predict", headers={"origin": "https://ok.example", "access-control-request-method": "POST"})
        assert good.headers["access-control-allow-origin"] == "https://ok.example"
        bad = c.options("/predict", headers={"origin": "https://evil.example", "access-control-request-method": "POST"})
        assert "access-control-allow-origin" not in bad.headers


# settings: every number finite and in range; the port and host checked before "serving" is printed
@pytest.mark.parametrize("flags, words", [
    (["--max-wait-ms", "nan"], "--max-wait-ms must be a number from 0 to 1000"),
    (["--max-wait-ms", "inf"], "--max-wait-ms must be a number from 0 to 1000"),
    (["--max-wait-ms", "1e308"], "--max-wait-ms must be a number from 0 to 1000"),
    (["--timeout-ms", "0"], "--timeout-ms must be a number from 1"),
    (["--max-queue", "0"], "--max-queue must be a whole number from 1"),
    (["--port", "70000"], "--port must be from 0 to 65535"),
    (["--port", "-1"], "--port must be from 0 to 65535"),
    (["--host", "no-such-host.invalid"], "does not resolve"),
    (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1"),
])
def test_bad_serve_settings_fail_in_one_line_before_serving(exported, capsys, flags, words):
    assert cli.main(["serve", "--predictor", str(exported), *flags]) == 1
    err = capsys.readouterr().err
    assert words in err and "serving" not in err and err.count("\n") == 1


def test_a_port_in_use_is_refused_before_serving(exported, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--predictor", str(exported), "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "serving" not in err


# swaps: a request is answered by the model it was checked against; a failed reload is retried
def test_a_swap_to_a_pair_model_never_answers_a_texts_request_with_it(exported):
    from ktrain_recipes_tools.service.batcher import MicroBatcher

    app = create_app(ServiceSettings(str(exported), reload_interval=0))
    batcher: MicroBatcher = app.state.batcher
    single = batcher.model

    class PairModel:  # stands in for a sentence-pair save swapped in while requests wait
        classes = ["0", "1"]

        def predict_proba(self, texts):
            raise AssertionError("a request checked against the single-text model reached the pair model")

    from dataclasses import replace

    pair = replace(single, classifier=PairModel(), pairs=True, digest="pair")

    async def scenario():
        runner = asyncio.create_task(batcher.run())
        while batcher.queue is None:
            await asyncio.sleep(0)
        waiting = [asyncio.create_task(batcher.predict([TEXTS[i % 4]], single)) for i in range(20)]
        await asyncio.sleep(0)
        batcher.model = pair  # the swap lands while they wait
        results = await asyncio.gather(*waiting)
        runner.cancel()
        return results

    for probs, used, _ in asyncio.run(scenario()):
        assert used is single and probs.shape[1] == len(single.classifier.classes)


def test_a_failed_reload_is_retried_after_a_back_off(exported, twin, tmp_path):
    """A save that fails to load is not tried again on every check, but after a back-off that doubles while it
    keeps failing; a save with another manifest is tried at once; the old model serves meanwhile."""
    import shutil

    from predictor_copies import save_copy

    live = tmp_path / "live"
    shutil.copytree(exported, live)
    app = create_app(ServiceSettings(str(live), reload_interval=0))
    reloader, batcher = app.state.reloader, app.state.batcher
    serving = batcher.model
    # a save under way: a new manifest, and files that fail its check
    (live / "tf_model.h5").unlink()  # a new file: never write through a hard link into a fixture
    (live / "tf_model.h5").write_bytes(b"half-copied")
    manifest = json.loads((live / "manifest.json").read_text())
    (live / "manifest.json").write_text(json.dumps({**manifest, "save_id": "half-copied"}))

    async def scenario():
        loop = asyncio.get_running_loop()
        first = await reloader.check()  # tried: fails
        after_first = (reloader.failures, reloader.retry_at - loop.time())
        again = await reloader.check()  # the same save, within its back-off: not tried
        reloader.retry_at = loop.time()  # the back-off has passed
        third = await reloader.check()  # tried again: fails, and the back-off doubles
        after_third = (reloader.failures, reloader.retry_at - loop.time())
        save_copy(twin, live)  # another save lands: tried at once, and swapped in
        fourth = await reloader.check()
        return first, after_first, again, third, after_third, fourth

    first, after_first, again, third, after_third, fourth = asyncio.run(scenario())
    assert (first, again, third) == (False, False, False) and fourth is True
    first_wait = reloader.FIRST_BACKOFF_S
    assert after_first[0] == 1 and first_wait - 0.5 < after_first[1] <= first_wait
    assert after_third[0] == 2 and 2 * first_wait - 0.5 < after_third[1] <= 2 * first_wait
    assert batcher.model is not serving and reloader.swaps == 1 and reloader.failed_stamp is None


def test_an_int8_service_waits_for_the_export_of_a_new_save(exported, tiny_predictor, tmp_path):
    """Serving int8 (``auto``), a new save without its int8 copy (between `train` and `export`) is not loaded
    with TensorFlow behind the operator's back: the int8 model keeps serving until `export` adds the copy."""
    import shutil

    from ktrain_recipes.inference.onnx_inference import export_onnx
    from predictor_copies import save_copy

    live = tmp_path / "live"
    shutil.copytree(exported, live)
    app = create_app(ServiceSettings(str(live), reload_interval=0))
    reloader, batcher = app.state.reloader, app.state.batcher
    assert batcher.model.identity["backend"] == "int8"
    save_copy(tiny_predictor, live)  # a new save, no ONNX files yet

    async def scenario():
        before_export = await reloader.check()
        export_onnx(live)
        reloader.retry_at = 0.0  # (export rewrote the manifest: tried at once anyway)
        return before_export, await reloader.check()

    before_export, after_export = asyncio.run(scenario())
    assert before_export is False and reloader.failures == 1
    assert after_export is True and batcher.model.identity["backend"] == "int8"


def test_auto_falls_back_to_ktrain_when_the_int8_file_is_damaged(exported, tmp_path, capsys):
    import shutil

    from ktrain_recipes_tools.service.model import load_model

    folder = tmp_path / "damaged"
    shutil.copytree(exported, folder)
    with open(folder / "model.int8.onnx", "r+b") as f:
        f.seek(100)
        f.write(b"\x00" * 64)
    model = load_model(folder, "auto", threads=1)
    assert model.identity["backend"] == "ktrain"
    err = capsys.readouterr().err
    assert "serving with ktrain's predictor" in err and err.count("warning") == 1
    with pytest.raises(RecipesError, match="does not match its checksum"):
        load_model(folder, "int8", threads=1)


def test_the_service_never_answers_a_plain_text_error(exported):
    app = create_app(ServiceSettings(str(exported), reload_interval=0))

    def broken(texts):
        raise MemoryError("simulated")

    with TestClient(app, raise_server_exceptions=False) as c:
        app.state.batcher.model.classifier.predict_proba = broken
        r = c.post("/predict", json={"texts": TEXTS})
        assert r.status_code == 500 and r.headers["content-type"] == "application/json"
        assert "\n" not in r.json()["error"]


@pytest.mark.browser
@pytest.mark.network
def test_the_api_page_renders_offline_from_the_package(exported):

    from playwright.sync_api import sync_playwright

    with running(serve_args(exported)) as (url, _):
        with sync_playwright() as p:
            browser = chromium(p)
            page = browser.new_page()
            remote = []
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith((url, "data:")) else None)
            page.goto(url + "/docs")
            page.wait_for_selector("text=/predict", timeout=15000)  # Swagger UI drew the operations
            title = page.text_content(".info .title")
            browser.close()
    assert "ktrain-recipes predictor" in title
    assert not remote, remote  # every file came from the service


# bounds on each connection: header size and count (431), time to send headers and body (408), a refused body
# drained so that the client reads its 413, and JSON for bytes that are not HTTP
def raw_exchange(url: str, data: bytes, wait_s: float = 10.0) -> tuple[int, dict, float]:
    """Send ``data`` on a fresh connection and read until the server closes it: (status, JSON body, seconds)."""
    import time

    host, port = url.removeprefix("http://").split(":")
    start = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=wait_s) as conn:
        try:
            conn.sendall(data)
        except OSError:
            pass
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), answer[:300]
    return int(head.split()[1]), json.loads(body), time.monotonic() - start


def _one_answer(conn: socket.socket) -> bytes:
    """Read one HTTP answer with a content-length from a kept-alive connection: its head and body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: *(\d+)", head, re.I).group(1))
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.network
def test_an_idle_kept_alive_connection_outlives_the_clients_own_idle_expiry(exported):
    """A client (httpx: 5 s idle expiry, as uvicorn's default keep-alive) reuses a connection idle for 6 s: the
    server must not be closing it then, or the request meets a reset (the load test's rare ReadError)."""
    import time

    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with running(serve_args(exported)) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(request)
            first = _one_answer(conn)
            time.sleep(6)
            try:
                conn.sendall(request)
                second = _one_answer(conn)
            except OSError as exc:  # reset by a server that closed it
                second = repr(exc).encode()
    assert first.startswith(b"HTTP/1.1 200") and second.startswith(b"HTTP/1.1 200"), second[:200]


@pytest.mark.network
def test_connection_bounds_answer_431_and_408_in_json(exported):
    flags = ("--header-timeout-s", "1", "--body-timeout-s", "1", "--max-header-bytes", "8192", "--max-headers", "20")
    with running(serve_args(exported, *flags)) as (url, _):
        huge = b"POST /predict HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
        status, body, _ = raw_exchange(url, huge)
        assert status == 431 and "over 8192 bytes" in body["error"]
        # one header line that never ends: refused as its bytes arrive, long before the header deadline
        endless = b"POST /predict HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 400_000
        status, body, took = raw_exchange(url, endless)
        assert status == 431 and "over 8192 bytes" in body["error"] and took < 1.0 + 2.5
        trailer = (b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Trailer: " + b"a" * 400_000)
        status, body, _ = raw_exchange(url, trailer)  # an endless trailer after a chunked body
        assert status == 431, body
        many = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(30)) + b"\r\n"
        status, body, _ = raw_exchange(url, many)
        assert status == 431 and "over 20 headers" in body["error"]
        status, body, took = raw_exchange(url, b"POST /predict HTTP/1.1\r\nHost: x\r\n")  # headers never finish
        assert status == 408 and "headers did not arrive within 1 s" in body["error"] and took < 5
        short = (b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                 b'{"te')
        status, body, took = raw_exchange(url, short)  # the body promises more than it sends
        assert status == 408 and "body did not arrive within 1 s" in body["error"] and took < 5
        status, body, _ = raw_exchange(url, b"\x16\x03\x01 not http at all\r\n\r\n")
        assert status == 400 and "not valid HTTP" in body["error"]
        assert httpx.get(url + "/health/ready").status_code == 200  # and the server serves on
        metrics = httpx.get(url + "/metrics").text  # each answered refusal is counted, by its own status
        counted = {status: float(re.search(rf'ktrain_recipes_requests_total{{route="\(connection\)",'
                                           rf'status="{status}"}} ([0-9.]+)', metrics).group(1))
                   for status in ("431", "408", "400")}
        assert counted == {"431": 4.0, "408": 2.0, "400": 1.0}, counted
        # the body that never arrived reached no route's answer: no phantom /predict 500 beside its 408
        assert not re.search(r'ktrain_recipes_requests_total{route="/predict",status="5', metrics), metrics


@pytest.mark.network
def test_slow_bodies_hold_no_place_that_other_clients_need(exported):
    """16 connections that send their headers and then their bodies never: with --max-concurrent 4 the real
    requests are still answered 200 (a request counts once its body is in), and readiness says ready."""
    with running(serve_args(exported, "--max-concurrent", "4", "--body-timeout-s", "30")) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        idle = []
        for _ in range(16):
            conn = socket.create_connection((host, int(port)))
            conn.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{\"texts\": [")
            idle.append(conn)
        try:
            statuses = [httpx.post(url + "/predict", json={"texts": TEXTS}, timeout=10).status_code
                        for _ in range(8)]
            ready = httpx.get(url + "/health/ready").status_code
        finally:
            for conn in idle:
                conn.close()
    assert statuses == [200] * 8 and ready == 200


@pytest.mark.network
def test_a_client_sending_a_whole_oversized_body_reads_the_413(exported):
    import urllib.error
    import urllib.request

    with running(serve_args(exported, "--max-body-bytes", "100000")) as (url, _):
        body = json.dumps({"texts": ["x" * 1000] * 2000}).encode()  # 2 MB, sent whole before the answer is read
        request = urllib.request.Request(url + "/predict", data=body, headers={"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 413 and "over 100000 bytes" in json.loads(refused.value.read())["error"]
        assert httpx.get(url + "/health/ready").status_code == 200
