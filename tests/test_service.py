"""The HTTP service: every endpoint and error in process, a real uvicorn driven with httpx under load with a hot
swap in the middle, the web page in a real browser, and a schema-driven pass that finds no 5xx."""

import asyncio
import json
import shutil
import subprocess
import sys
import time

import httpx
import pytest

from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes.predictor.manifest import MANIFEST, write_manifest
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings

TEXTS = ["i feel so happy today", "i am terrified of the dark", "this makes me furious"]


@pytest.fixture(scope="module")
def client(exported):
    from fastapi.testclient import TestClient

    with TestClient(create_app(ServiceSettings(str(exported), max_batch=8, max_chars=200, max_body_bytes=5000,
                                               reload_interval=0))) as c:
        yield c


def test_predict_gives_labels_probabilities_and_identity(client, exported):
    answer = client.post("/predict", json={"texts": TEXTS}).json()
    manifest = json.loads((exported / MANIFEST).read_text())
    assert len(answer["predictions"]) == 3
    for p in answer["predictions"]:
        assert set(p["probabilities"]) == set(manifest["label_names"])
        assert abs(sum(p["probabilities"].values()) - 1) < 1e-4
        assert p["label"] == max(p["probabilities"], key=p["probabilities"].get)
    assert answer["model"]["labels"] == manifest["label_names"] and answer["model"]["backend"] == "int8"
    assert answer["model"]["save_id"] == manifest["save_id"]


def test_health_metadata_page_and_openapi(client):
    assert client.get("/health").json()["status"] == "ok"
    meta = client.get("/metadata").json()
    assert meta["backend"] == "int8" and meta["maxlen"] >= 8 and meta["versions"]["ktrain"] == "0.41.4"
    assert meta["limits"]["max_batch"] == 8 and "accuracy" in meta["scores"]
    page = client.get("/").text
    assert 'id="classify"' in page and "http://" not in page.replace("http://' + ", "")  # no CDN: nothing remote
    assert "/predict" in client.get("/openapi.json").json()["paths"]
    assert client.get("/docs").status_code == 200


@pytest.mark.parametrize("body, status, words", [
    (b"not json", 400, "not valid JSON"),
    (b"{}", 422, "exactly one of"),
    (b"[]", 422, "valid dictionary"),
    (b'{"texts": []}', 422, "is empty"),
    (b'{"texts": "one text"}', 422, "valid list"),
    (b'{"texts": [1, 2]}', 422, "valid string"),
    (b'{"texts": [null]}', 422, "valid string"),
    (b'{"texts": ["   \\n\\t"]}', 422, "only whitespace"),
    (b'{"texts": [""]}', 422, "only whitespace"),
    (b'{"texts": ["a"], "extra": 1}', 422, "Extra inputs"),
    (b'{"texts": ["a"], "pairs": [["a", "b"]]}', 422, "exactly one of"),
    (b'{"pairs": [["only one"]]}', 422, "at least 2"),
    (json.dumps({"texts": ["ok"] * 9}).encode(), 422, "at most 8"),
    (json.dumps({"texts": ["x" * 201]}).encode(), 422, "over the limit of 200"),
    (json.dumps({"texts": ["x" * 6000]}).encode(), 413, "over 5000 bytes"),
])
def test_bad_input_is_a_4xx_with_a_one_line_json_error(client, body, status, words):
    response = client.post("/predict", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert words in error and "\n" not in error


def test_pairs_and_single_texts_are_refused_where_they_do_not_fit(exported, tmp_path):
    from fastapi.testclient import TestClient

    for pairs, wrong, right in [(False, {"pairs": [["a b", "c d"]]}, {"texts": ["a b"]}),
                                (True, {"texts": ["a b"]}, {"pairs": [["a b", "c d"]]})]:
        folder = tmp_path / f"pairs-{pairs}"
        shutil.copytree(exported, folder)
        manifest = json.loads((folder / MANIFEST).read_text())
        write_manifest(folder, manifest["label_names"], manifest["maxlen"], {"model_id": "x"}, kind="classifier",
                       pairs=pairs, onnx_inputs=manifest["onnx_inputs"])
        with TestClient(create_app(ServiceSettings(str(folder), reload_interval=0))) as c:
            response = c.post("/predict", json=wrong)
            assert response.status_code == 422
            assert ("sentence pairs" if pairs else "single texts") in response.json()["error"]
            assert c.post("/predict", json=right).status_code == 200


def test_the_ktrain_backend_answers_like_the_int8_one(exported):
    from fastapi.testclient import TestClient

    with TestClient(create_app(ServiceSettings(str(exported), backend="ktrain", reload_interval=0))) as c:
        answer = c.post("/predict", json={"texts": TEXTS}).json()
    assert answer["model"]["backend"] == "ktrain" and len(answer["predictions"]) == 3


def test_settings_are_checked_when_made():
    from ktrain_recipes import RecipesError

    with pytest.raises(RecipesError, match="--backend must be one of"):
        ServiceSettings("x", backend="gpu")
    with pytest.raises(RecipesError, match="--max-batch must be a whole number from 1 to 100000, got 0"):
        ServiceSettings("x", max_batch=0)


NO_TF = """
import pickle, sys
from pathlib import Path
from fastapi.testclient import TestClient
from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings
with TestClient(create_app(ServiceSettings(sys.argv[1], reload_interval=0))) as c:
    answer = c.post("/predict", json={"texts": ["i am happy"]}).json()
assert answer["model"]["backend"] == "int8", answer
assert "tensorflow" not in sys.modules, "the int8 service imported TensorFlow"
print("ok")
"""


def test_the_int8_service_imports_no_tensorflow_and_never_runs_the_pickle(exported, tmp_path):
    from predictor_copies import plant_payload

    folder, marker = plant_payload(exported, tmp_path)
    run = subprocess.run([sys.executable, "-c", NO_TF, str(folder)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
    assert not marker.exists()


def test_binding_beyond_loopback_without_a_key_warns(monkeypatch, exported, capsys, tmp_path):
    import socket

    import uvicorn

    import ktrain_recipes_tools.service.server as service

    bound = []

    def loopback(host, port):  # the test never listens beyond 127.0.0.1: the bind is made there instead
        bound.append(host)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        return sock

    monkeypatch.setattr(service, "bind", loopback)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr("logging.basicConfig", lambda **k: None)  # its handler would outlive this test's stderr
    monkeypatch.delenv("KTRAIN_RECIPES_API_KEY", raising=False)
    assert cli.main(["serve", "--predictor", str(exported), "--host", "0.0.0.0"]) == 0
    assert "without an API key" in capsys.readouterr().err and bound == ["0.0.0.0"]
    (tmp_path / "key").write_text("s3cret\n")
    assert cli.main(["serve", "--predictor", str(exported), "--host", "0.0.0.0", "--api-key-file",
                     str(tmp_path / "key")]) == 0
    assert "without an API key" not in capsys.readouterr().err
    assert cli.main(["serve", "--predictor", str(exported)]) == 0
    assert "without an API key" not in capsys.readouterr().err
    # Ray Serve's engine warns the same way (its start is stopped here, after the warning: no cluster starts)
    monkeypatch.setattr("ktrain_recipes.predictor.saved.read_predictor", _stop_here)  # the driver's folder check
    assert cli.main(["serve", "--engine", "ray", "--predictor", str(exported), "--host", "0.0.0.0"]) == 1
    err = capsys.readouterr().err
    assert "without an API key" in err and "stopped before Ray" in err and bound[-1] == "0.0.0.0"


def _stop_here(*args, **kwargs):
    raise RecipesError("stopped before Ray started")


async def _load(url: str, n: int, concurrency: int, on_half=None, seconds: float = 120.0) -> list[dict]:
    """n POSTs of one text each at a given concurrency; bounded in count and time."""
    results: list[dict] = []
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=30) as http:
        async def one(i: int):
            async with sem:
                text = TEXTS[i % len(TEXTS)]
                sent = time.monotonic()
                try:
                    r = await http.post(url + "/predict", json={"texts": [text]})
                    body = r.json()
                except (httpx.HTTPError, ValueError) as exc:
                    # the exception's kind, its cause and how long it took: a read timeout (30 s) and a reset
                    # connection (at once) both say nothing in str()
                    results.append({"i": i, "status": None, "error": f"{type(exc).__name__}: {exc}",
                                    "cause": repr(exc.__cause__ or exc.__context__),
                                    "after_s": round(time.monotonic() - sent, 3)})
                    return
                results.append({"i": i, "text": text, "status": r.status_code, "body": body, "t": time.monotonic()})
                if on_half and len(results) == n // 2:
                    await asyncio.get_running_loop().run_in_executor(None, on_half)

        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(n))), seconds)
    return results


@pytest.mark.network
def test_a_real_server_under_load_with_a_hot_swap(exported, twin, tmp_path):
    from predictor_copies import save_copy
    from servers import running

    live = tmp_path / "live"
    shutil.copytree(exported, live)
    original = json.loads((exported / MANIFEST).read_text())["label_names"]
    with running(["-m", "ktrain_recipes", "serve", "--predictor", str(live), "--reload-interval", "0.2"]) as (url, _):
        expected = {t: p["label"] for t, p in zip(TEXTS, httpx.post(url + "/predict", json={"texts": TEXTS})
                                                     .json()["predictions"])}
        results = asyncio.run(_load(url, 2000, 32, on_half=lambda: save_copy(twin, live)))
        time.sleep(1)
        after = httpx.post(url + "/predict", json={"texts": TEXTS}).json()
        # a broken save is not loaded: the service goes on with the last good one
        # fails the manifest check; a new file, not a write through the hard link save_copy made to twin's
        (live / "tf_model.h5").unlink()
        (live / "tf_model.h5").write_bytes(b"broken")
        manifest = json.loads((live / MANIFEST).read_text())
        (live / MANIFEST).write_text(json.dumps({**manifest, "save_id": "broken"}))
        time.sleep(1)
        still = httpx.post(url + "/predict", json={"texts": TEXTS})
    assert len(results) == 2000
    failures = [r for r in results if r["status"] != 200]
    assert not failures, failures[:3]
    assert all(r["body"]["predictions"][0]["label"] == expected[r["text"]] for r in results)  # never a mixed model
    labels_seen = [tuple(r["body"]["model"]["labels"]) for r in sorted(results, key=lambda r: r["t"])]
    assert labels_seen[0] == tuple(original) and labels_seen[-1] == tuple(reversed(original))
    assert after["model"]["labels"] == list(reversed(original))
    assert still.status_code == 200 and still.json()["model"]["labels"] == list(reversed(original))


@pytest.mark.browser
@pytest.mark.network
def test_the_web_page_in_a_real_browser(exported):
    from playwright.sync_api import sync_playwright

    from servers import chromium, running

    with running(["-m", "ktrain_recipes", "serve", "--predictor", str(exported)]) as (url, _):
        expected = httpx.post(url + "/predict", json={"texts": [TEXTS[0]]}).json()["predictions"][0]["label"]
        with sync_playwright() as p:
            browser = chromium(p)
            page = browser.new_page()
            remote = []
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(url) else None)
            page.goto(url + "/")
            page.fill("#text", TEXTS[0])
            page.click("#classify")
            page.wait_for_function("document.querySelector('#label').textContent.length > 0", timeout=15000)
            label = page.text_content("#label")
            bars = page.locator("#bars .row").count()
            page.fill("#text", "   ")
            page.click("#classify")
            page.wait_for_function("document.querySelector('#error').textContent.length > 0", timeout=15000)
            error = page.text_content("#error")
            browser.close()
    assert label == expected and bars == 6
    assert "whitespace" in error
    assert not remote  # every asset came from the service


def test_the_openapi_schema_driven_pass_finds_no_5xx(exported):
    import schemathesis
    from hypothesis import HealthCheck, given, settings

    app = create_app(ServiceSettings(str(exported), max_batch=16, reload_interval=0))
    from fastapi.testclient import TestClient

    with TestClient(app):  # starts the batcher
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        statuses = []
        for operation in schema.get_all_operations():
            op = operation.ok()

            @given(case=op.as_strategy())
            @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
            def check(case):
                response = case.call()
                statuses.append(response.status_code)
                assert response.status_code < 500, (case.body, response.text)

            check()
    assert len(statuses) >= 60 and any(s == 200 for s in statuses) and any(400 <= s < 500 for s in statuses)


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.ray
def test_serve_bench_measures_every_server_and_the_overload_level(exported, tmp_path):
    from ktrain_recipes_tools.studies.serve_bench import OVERLOAD, SERVERS, run_serve_bench

    result = run_serve_bench(str(exported), out=str(tmp_path), assets=str(tmp_path), concurrencies=[1, 4],
                             seconds=3, texts="emotion")
    assert result["texts"].startswith("the emotion slice's validation texts") and result["cpu_features"] is not None
    assert [r["server"] for r in result["servers"]] == list(SERVERS)
    for row in result["servers"]:
        assert row["rss_mb_at_rest"] > 50
        expected = [OVERLOAD] if row["server"] == "f_overload" else [1, 4]
        assert [lv["concurrency"] for lv in row["levels"]] == expected
        assert all(lv["requests"] >= 5 and lv["good_rps"] > 0 and lv["p50_ms"] <= lv["p99_ms"] for lv in row["levels"])
        for lv in row["levels"]:  # every answer counted by status
            assert sum(lv["statuses"].values()) == lv["requests"]
        if row["server"] != "a_flask_ktrain_faq":  # the FAQ app shares one tokenizer between threads: it may fail
            assert all(lv["failures"] == 0 for lv in row["levels"]), row
        if row["server"] in ("b_service_ktrain", "c_service_int8"):  # the latency by length, from /metrics
            for lv in row["levels"]:
                # the server also answers what wrk left in flight when a level ended: at most this level's clients
                # and the previous level's (4 at most here)
                answered = sum(b["requests"] for b in lv["by_length"].values())
                assert 0 <= answered - lv["statuses"]["200"] <= lv["concurrency"] + 4, (answered, lv)
                assert len(lv["by_length"]) >= 2  # the slice's texts fall in more than one length bucket
                assert all(b["p50_ms"] <= b["p99_ms"] for b in lv["by_length"].values())
    overload = next(r for r in result["servers"] if r["server"] == "f_overload")["levels"][0]
    assert overload["refused_429"] > 0 and set(overload["statuses"]) <= {"200", "429", "503"}
    assert result["targets"]["overload_other_non_2xx"]["met"]
    assert "c32_rps_ratio_ray2_over_c" not in result["targets"]  # no level at 32 clients in this short run
    assert (tmp_path / "serve_bench.png").stat().st_size > 1000
    assert "| refused 429/503 |" in (tmp_path / "serve_bench.md").read_text()


def test_choosing_the_backend_and_loading_hash_each_file_once(exported, monkeypatch):
    from collections import Counter

    import ktrain_recipes.predictor.saved as saved
    from ktrain_recipes_tools.service.model import load_model

    hashed, real = Counter(), saved.sha256_file
    monkeypatch.setattr(saved, "sha256_file", lambda path: hashed.update([path.name]) or real(path))
    loaded = load_model(exported, "auto", threads=1)
    assert loaded.identity["backend"] == "int8"
    assert hashed and max(hashed.values()) == 1, hashed
    assert "model.int8.onnx" in hashed and "tf_model.h5" in hashed  # the whole folder was checked, once


def test_the_ktrain_backend_checks_the_folder_once_too(exported, monkeypatch):
    from collections import Counter

    import ktrain_recipes.predictor.saved as saved
    from ktrain_recipes_tools.service.model import load_model

    hashed, real = Counter(), saved.sha256_file
    monkeypatch.setattr(saved, "sha256_file", lambda path: hashed.update([path.name]) or real(path))
    assert load_model(exported, "ktrain").identity["backend"] == "ktrain"
    assert hashed["tf_model.h5"] == 1, hashed


def test_a_failure_no_client_caused_is_a_json_500_in_one_line_not_a_traceback(exported):
    """The generic handler: an unexpected exception in a route answers JSON (never a plain-text page)."""
    from fastapi.testclient import TestClient

    app = create_app(ServiceSettings(str(exported), reload_interval=0))
    with TestClient(app, raise_server_exceptions=False) as client:
        app.state.batcher.model.metrics = {"accuracy": object()}  # /metadata cannot encode it: a server fault
        answer = client.get("/metadata")
        assert answer.status_code == 500 and answer.headers["content-type"] == "application/json"
        assert set(answer.json()) == {"error"} and answer.json()["error"].startswith("the server failed (")
        assert "\n" not in answer.json()["error"]
        assert client.post("/predict", json={"texts": ["i feel fine"]}).status_code == 200  # others still answered


def test_a_histograms_quantile_is_read_as_prometheus_reads_it():
    from ktrain_recipes_tools.studies.latency_by_length import by_length, histogram_quantile

    edges, cumulative = [0.01, 0.02, 0.05, float("inf")], [50, 90, 100, 100]
    assert histogram_quantile(0.5, edges, cumulative) == 0.01  # the 50th of 100 is the first bucket's top
    assert abs(histogram_quantile(0.7, edges, cumulative) - 0.015) < 1e-12  # 20 of the 40 in (0.01, 0.02]
    assert abs(histogram_quantile(0.99, edges, cumulative) - 0.047) < 1e-12
    scrape = ("# TYPE ktrain_recipes_request_by_length_seconds histogram\n" + "".join(
        f'ktrain_recipes_request_by_length_seconds_bucket{{le="{le}",tokens="17-32"}} {n}\n'
        for le, n in [("0.01", 10), ("0.02", 30), ("+Inf", 30)]))
    before = scrape.replace(" 10\n", " 0\n").replace(" 30\n", " 10\n")
    # this level added 10 answers under 10 ms and 10 between 10 and 20 ms
    assert by_length(before, scrape) == {"17-32": {"requests": 20, "p50_ms": 10.0, "p99_ms": 19.8}}
