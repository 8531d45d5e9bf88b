"""vLLM's classification API beside /predict (the same answers, bounds, auth and errors), and truncation a client can
see on every route: tokens read per item, a flag when cut, a count in /metrics, and `truncate: false` refused."""

import pytest

from ktrain_recipes_tools.service.app import create_app
from ktrain_recipes_tools.service.settings import ServiceSettings

TEXTS = ["i feel so happy today", "i am terrified of the dark", "this makes me furious"]
LONG = "i feel " + " ".join(["wonderful"] * 150)


@pytest.fixture(scope="module")
def client(exported):
    from fastapi.testclient import TestClient

    with TestClient(create_app(ServiceSettings(str(exported), max_batch=8, max_chars=2000, max_body_bytes=20000,
                                               reload_interval=0))) as c:
        yield c


def vllm_classify(client, path: str, model: str | None, inputs, **fields) -> dict:
    """A client written against vLLM's documented /classify format (docs.vllm.ai, "Classification API")."""
    body = {"input": inputs, **fields} if model is None else {"model": model, "input": inputs, **fields}
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["object"] == "list" and answer["id"].startswith("classify-") and isinstance(answer["created"], int)
    assert answer["usage"]["completion_tokens"] == 0
    tokens = sum(d["tokens"] for d in answer["data"])
    assert answer["usage"]["prompt_tokens"] == answer["usage"]["total_tokens"] == tokens
    return answer


@pytest.mark.parametrize("path", ["/classify", "/v1/classify"])
def test_classify_answers_as_vllm_does_and_as_predict_does(client, path):
    listed = client.get("/v1/models").json()
    assert listed["object"] == "list" and len(listed["data"]) == 1
    model, labels = listed["data"][0]["id"], listed["data"][0]["labels"]
    answer = vllm_classify(client, path, model, TEXTS)
    predicted = client.post("/predict", json={"texts": TEXTS}).json()["predictions"]
    assert answer["model"] == model and [d["index"] for d in answer["data"]] == [0, 1, 2]
    for item, same in zip(answer["data"], predicted):
        assert item["num_classes"] == len(labels) == len(item["probs"])
        assert item["label"] == same["label"] == labels[max(range(len(labels)), key=item["probs"].__getitem__)]
        assert item["probs"] == pytest.approx([same["probabilities"][name] for name in labels], abs=1e-6)
        assert item["tokens"] == same["tokens"] and item["truncated"] is same["truncated"] is False


def test_classify_takes_one_text_and_may_leave_the_model_out(client):
    answer = vllm_classify(client, "/classify", None, "i feel so happy today")
    assert len(answer["data"]) == 1 and answer["data"][0]["index"] == 0


@pytest.mark.parametrize("body, status, words", [
    ({"model": "another-model", "input": ["hi there"]}, 404, "is not served here"),
    ({"input": []}, 400, "is empty"),
    ({"input": ["   "]}, 400, "input[0] is empty"),
    ({"input": [1, 2]}, 400, "input[0] is token ids"),
    ({"model": "x"}, 400, "input"),
    (b'{"input": ["ok", "\\ud800"]}', 400, "input[1]"),
])
def test_classify_errors_are_vllms_json_errors(client, body, status, words):
    response = (client.post("/classify", content=body, headers={"content-type": "application/json"})
                if isinstance(body, bytes) else client.post("/classify", json=body))
    assert response.status_code == status and set(response.json()) == {"error"}, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == status
    assert words in error["message"] and "\n" not in error["message"]


@pytest.mark.parametrize("field, value", [("truncate_prompt_tokens", 5), ("truncate_prompt_tokens", 513),
                                          ("truncate_prompt_tokens", -2), ("truncation_side", "left"),
                                          ("add_special_tokens", False)])
def test_vllms_own_fields_are_refused_by_name_never_dropped(client, field, value):
    response = client.post("/classify", json={"input": ["i feel fine"], field: value})
    assert response.status_code == 400 and response.json()["error"]["param"] == field
    assert field in response.json()["error"]["message"]


@pytest.mark.parametrize("field, value", [("use_activation", True), ("truncate_prompt_tokens", -1),
                                          ("truncation_side", "right"), ("add_special_tokens", True),
                                          ("activation", True), ("softmax", True), ("user", "someone"),
                                          ("priority", 0), ("request_id", "r1")])
def test_vllms_own_fields_are_honoured_where_they_ask_what_is_served(client, field, value):
    answer = vllm_classify(client, "/classify", None, ["i feel fine"], **{field: value})
    assert answer["data"][0]["probs"] and abs(sum(answer["data"][0]["probs"]) - 1) < 1e-4


def test_the_model_id_names_the_save_and_the_answer_its_labels(client):
    listed = client.get("/v1/models").json()["data"][0]
    folder, save = listed["id"].split("@")
    assert folder and save == client.get("/metadata").json()["model"]["save_id"]
    answer = vllm_classify(client, "/classify", folder, ["i feel fine"])  # the folder's name alone is accepted
    assert answer["model"] == listed["id"] and answer["labels"] == listed["labels"]


def test_both_routes_agree_at_maxlen(client):
    # texts of maxlen - 1, maxlen and maxlen + 1 tokens (special tokens included): only the last is cut, on both routes
    maxlen = client.get("/metadata").json()["maxlen"]
    one, two = (client.post("/predict", json={"texts": [" ".join(["happy"] * n)]}).json()["predictions"][0]["tokens"]
                for n in (1, 2))
    assert two - one == 1, "the boundary texts need a word of one token"
    texts = [" ".join(["happy"] * (total - (one - 1))) for total in (maxlen - 1, maxlen, maxlen + 1)]
    predicted = client.post("/predict", json={"texts": texts}).json()["predictions"]
    classified = vllm_classify(client, "/classify", None, texts)["data"]
    for answers in (predicted, classified):
        assert [a["truncated"] for a in answers] == [False, False, True]
        assert [a["tokens"] for a in answers] == [maxlen - 1, maxlen, maxlen]
    refused = client.post("/predict", json={"texts": texts[:2], "truncate": False})
    assert refused.status_code == 200  # an item of exactly maxlen tokens is read whole: nothing to refuse


def test_truncation_is_reported_per_item_counted_and_refusable(client):
    meta = client.get("/metadata").json()
    before = client.get("/metrics").text
    answer = client.post("/predict", json={"texts": [TEXTS[0], LONG]}).json()["predictions"]
    assert answer[0]["truncated"] is False and answer[0]["tokens"] < meta["maxlen"]
    assert answer[1]["truncated"] is True and answer[1]["tokens"] == meta["maxlen"]
    refused = client.post("/predict", json={"texts": [TEXTS[0], LONG], "truncate": False})
    assert refused.status_code == 422 and "texts[1] is" in refused.json()["error"]
    assert f"over this model's {meta['maxlen']}" in refused.json()["error"]
    also = client.post("/classify", json={"input": [LONG], "truncate": False})
    assert also.status_code == 400 and "input[0] is" in also.json()["error"]["message"]
    cut = vllm_classify(client, "/classify", None, [LONG])["data"][0]
    assert cut["truncated"] is True and cut["tokens"] == meta["maxlen"]
    after = client.get("/metrics").text

    def count(text: str) -> float:
        line = next((ln for ln in text.splitlines() if ln.startswith("ktrain_recipes_truncated_texts_total")), "x 0")
        return float(line.split()[-1])

    assert count(after) - count(before) == 2  # the two cut texts answered; the refused ones were not
    assert "ktrain_recipes_tokens_read_bucket" in after
    left = client.post("/predict", json={"texts": ["hi"], "truncation_direction": "left"})
    assert left.status_code == 422 and "right" in left.json()["error"]
    tei = client.post("/predict", json={"texts": ["hi"], "truncation_direction": "Right"})  # TEI's own spelling
    assert tei.status_code == 200, tei.text


def test_the_latency_by_length_counts_each_request_under_its_longest_item(client):
    def counts(text: str) -> dict:
        return {tokens: float(ln.split()[-1]) for tokens in ("1-16", "17-32", "33-64", "65-128", "129+")
                for ln in text.splitlines()
                if ln.startswith(f'ktrain_recipes_request_by_length_seconds_count{{tokens="{tokens}"}}')}

    before = counts(client.get("/metrics").text)
    assert set(before) == {"1-16", "17-32", "33-64", "65-128", "129+"}  # every series from 0
    from ktrain_recipes_tools.service.metrics import length_bucket

    short, longer = "i am happy", " ".join(["i feel so very happy and relaxed today"] * 3)
    alone = client.post("/predict", json={"texts": [short]}).json()["predictions"][0]["tokens"]
    both = [item["tokens"] for item in client.post("/classify", json={"input": [short, longer]}).json()["data"]]
    assert length_bucket(alone) != length_bucket(max(both))  # the two requests fall in two buckets
    after = counts(client.get("/metrics").text)
    added = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    # one count per request, under its longest item: the pair of texts counts once, under the longer text's bucket
    assert added == {length_bucket(alone): 1.0, length_bucket(max(both)): 1.0}


def test_classify_is_behind_the_api_key(exported):
    from fastapi.testclient import TestClient

    key = exported.parent / "key"
    key.write_text("s3cret-key-for-tests")
    with TestClient(create_app(ServiceSettings(str(exported), api_key_file=str(key), reload_interval=0))) as c:
        assert c.post("/classify", json={"input": ["hi there"]}).status_code == 401
        ok = c.post("/v1/classify", json={"input": ["hi there"]},
                    headers={"authorization": "Bearer s3cret-key-for-tests"})
        assert ok.status_code == 200


def test_truncation_is_reported_by_the_command_line_and_in_python(exported, tmp_path):
    """Files: opt-in columns tokens and truncated (existing outputs keep their columns); Python: kr.classify's
    report."""
    import csv
    import subprocess
    import sys

    import ktrain_recipes as kr

    model = kr.open_predictor(exported, int8=True)
    report = kr.classify(model, [TEXTS[0], LONG], report=True)
    assert [r["truncated"] for r in report] == [False, True] and report[1]["tokens"] == model.maxlen
    assert report[0]["label"] == kr.classify(model, [TEXTS[0]])[0]
    source = tmp_path / "in.csv"
    source.write_text("text,id\n" + f"{TEXTS[0]},1\n{LONG},2\n")
    for flags, out in [([], "plain.csv"), (["--report-truncation"], "reported.csv")]:
        done = subprocess.run([sys.executable, "-m", "ktrain_recipes", "predict", "--predictor", str(exported),
                               "--int8", "--input", str(source), "--output", str(tmp_path / out), *flags],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-1500:]
    plain = list(csv.DictReader(open(tmp_path / "plain.csv")))
    reported = list(csv.DictReader(open(tmp_path / "reported.csv")))
    assert "tokens" not in plain[0] and "truncated" not in plain[0]  # existing outputs keep their columns
    assert [r["truncated"] for r in reported] == ["False", "True"] and int(reported[1]["tokens"]) == model.maxlen
    assert [r["label"] for r in reported] == [r["label"] for r in plain]


@pytest.mark.parametrize("inputs, words", [
    (["hi there"] * 9, "input holds 9 items, over the limit of 8 per request"),
    ([["only one"]], "input[0] is not a pair: a pair is [first, second]"),
    ([["a", "b", "c"]], "input[0] is not a pair"),
    ([["a", 5]], "input[0] is not a pair"),
    (["a text", ["a", "pair"]], "input[1] is a pair, and input[0] is a text"),
    ([["a", "pair"], "a text"], "input[1] is a text, and input[0] is a pair"),
    ([[["deeper"]]], "input[0] is not a pair"),
    (["ok", None], "input[1] is null, not a text"),
    (["ok", 5], "input[1] is int, not a text"),
])
def test_a_bad_input_list_is_refused_for_its_own_reason(client, inputs, words):
    """Battery v6 W4: each of these got the union's first complaint, "input.str: Input should be a valid string"."""
    response = client.post("/classify", json={"input": inputs})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert words in error["message"] and error["param"] == "input" and "valid string" not in error["message"]


def test_a_single_text_predictor_given_pairs_is_told_in_classifys_own_words(client):
    """W5: /classify told the client to send "texts", a field it does not take."""
    response = client.post("/classify", json={"input": [["a first", "a second"]]})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert 'send "input": ["...", ...]' in message and '"texts"' not in message


# what vLLM's own classification tests (vllm-project/vllm, tests/entrypoints/pooling/classify/test_online.py) send
# and assert, for the routes we claim


def test_vllms_empty_input_tests_get_400(client):
    for body in ({"input": ""}, {"input": []}):
        response = client.post("/classify", json=body)
        assert response.status_code == 400 and "error" in response.json(), response.text


def test_vllms_truncate_prompt_tokens_past_the_model_is_400_naming_it(client):
    maxlen = client.get("/metadata").json()["maxlen"]
    response = client.post("/classify", json={"input": "test", "truncate_prompt_tokens": maxlen + 1})
    assert response.status_code == 400 and "truncate_prompt_tokens" in response.json()["error"]["message"]
    same = vllm_classify(client, "/classify", None, "test", truncate_prompt_tokens=maxlen)  # it means -1
    assert same["data"][0]["probs"]


@pytest.mark.parametrize("name", ["use_activation", "activation", "softmax"])
def test_vllms_use_activation_false_gives_logits_whose_softmax_is_the_answer(client, name):
    """vLLM's test_use_activation: default == true; false differs; softmax(false) == true. vLLM 0.10/0.11 named
    the field activation and softmax: the same answer, not probabilities given for logits."""
    import numpy as np

    def probs(**fields):
        return np.array(vllm_classify(client, "/classify", None, TEXTS[0], **fields)["data"][0]["probs"])

    default, with_it, without = probs(), probs(**{name: True}), probs(**{name: False})
    assert np.allclose(default, with_it, atol=1e-2)
    assert not np.allclose(with_it, without, atol=1e-2)
    exp = np.exp(without - without.max())
    assert np.allclose(exp / exp.sum(), with_it, atol=1e-2)


def test_vllms_chat_form_and_token_ids_are_refused_by_name(client):
    chat = client.post("/classify", json={"messages": [{"role": "user", "content": "The cat sat on the mat."}]})
    assert chat.status_code == 400 and chat.json()["error"]["param"] == "messages"
    assert "send {\"input\"" in chat.json()["error"]["message"]
    ids = client.post("/classify", json={"input": [[1986, 1985, 572], [9073, 323]]})
    assert ids.status_code == 400 and "token ids" in ids.json()["error"]["message"]


def test_the_answer_id_carries_the_request_id_and_models_have_created(client):
    answer = client.post("/classify", json={"input": "hi"}, headers={"X-Request-Id": "abc123"}).json()
    assert answer["id"] == "classify-abc123"
    listed = client.get("/v1/models").json()["data"][0]
    assert isinstance(listed["created"], int) and listed["object"] == "model"


def test_every_error_on_the_vllm_routes_is_in_vllms_shape(client):
    """413, 404 and a validation refusal on /classify: one shape; /predict keeps its own."""
    big = client.post("/classify", json={"input": ["x" * 30_000]})  # over max_body_bytes=20000
    assert big.status_code == 413 and set(big.json()["error"]) == {"message", "type", "param", "code"}
    nothing = client.post("/classify", content=b"{not json", headers={"content-type": "application/json"})
    assert nothing.status_code == 400 and nothing.json()["error"]["code"] == 400
    assert isinstance(client.post("/predict", json={"texts": ["x" * 30_000]}).json()["error"], str)


def test_the_openapi_page_documents_vllms_error_shape_for_classify(client):
    spec = client.get("/openapi.json").json()
    for code in ("400", "413", "429", "503"):
        ref = spec["paths"]["/classify"]["post"]["responses"][code]["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith("/VllmErrorResponse"), ref
    assert spec["paths"]["/predict"]["post"]["responses"]["422"]["content"]["application/json"]["schema"][
        "$ref"].endswith("/ErrorResponse")
