"""vLLM's classification API, which SGLang and NVIDIA Dynamo copy: ``POST /classify`` and ``/v1/classify``, and
``GET /v1/models``, beside ``/predict``, with its bounds, auth, metrics and errors.

Request: ``{"model": "<id>", "input": "text" | ["text", ...] | [["first", "second"], ...]}`` (pairs: a list of
two-item lists, for sentence-pair predictors; ``truncate`` as in ``/predict``). Response: ``{"id", "object":
"list", "created", "model", "data": [{"index", "label", "probs", "num_classes", "tokens", "truncated"}],
"usage": {"prompt_tokens", "total_tokens", "completion_tokens": 0}}``; ``probs`` follow the order of the labels
``/v1/models`` and ``/metadata`` name; a predictor of several labels per text gives a sigmoid per label and, in
``over_threshold``, the labels over their thresholds. ``model`` may be left out; when given it must be the id
``/v1/models`` lists, or the folder's name alone (404 otherwise). The id names the save (``folder@save``): after a
hot swap that reorders the labels, the answers' ``model`` and ``labels`` say which order ``probs`` follow. The
answer's ``id`` carries the request's ``X-Request-Id`` when it has one.

Every error on these routes, from the connection's bounds to the model's, is in vLLM's shape, ``{"error":
{"message", "type", "param", "code"}}``, and every refusal of what the client sent is a 400, as vLLM answers (the
``openai`` client raises ``BadRequestError``). vLLM's own fields are honoured or refused by name, never dropped:
``use_activation`` false (and its older names ``activation``, ``softmax``) gives logits (``as_logits``);
``truncate_prompt_tokens`` -1 or the predictor's maxlen cuts there, another number is refused;
``truncation_side`` "right" only; ``add_special_tokens`` true only; the chat form (``messages``) and token ids are
refused, naming them. vLLM itself serves ``/classify`` at the root; ``/v1/classify`` is SGLang's form.
"""

import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def model_name(identity: dict) -> str:
    """The id a client names the served predictor by: its folder's name and its save (``runs@3f2a9c1e0b7d``), so
    that an answer from another save, whose labels may be in another order, never carries the same id."""
    folder = Path(identity["folder"]).resolve().name or "predictor"
    save = identity.get("save_id")
    return f"{folder}@{save}" if save else folder


def vllm_error(status: int, message: str, param: str | None = None, kind: str | None = None,
               headers: dict | None = None):
    """An error in vLLM's shape, for the vLLM routes: ``{"error": {"message", "type", "param", "code"}}``."""
    from fastapi.responses import JSONResponse

    from ktrain_recipes_tools.service.schemas import VLLM_ROUTES, error_content

    return JSONResponse(error_content(status, message, VLLM_ROUTES[0], param, kind), status_code=status,
                        headers=headers)


def as_vllm_error(response):
    """/predict's error answer (``{"error": "one line"}``, its status and headers kept) in vLLM's shape; a refusal
    of what the client sent is vLLM's 400, not FastAPI's 422."""
    import json

    message = json.loads(bytes(response.body))["error"]
    param = "input" if message.startswith("input") else None
    headers = {k: v for k, v in response.headers.items() if k.lower() in ("retry-after",)}
    status = 400 if response.status_code == 422 else response.status_code
    return vllm_error(status, message, param, headers=headers or None)


def vllm_refusal(body, field: str | None):
    """For a body the request model refused: vLLM's forms this service does not serve, named (the chat form's
    ``messages``), as a 400 in vLLM's shape; None for any other refusal."""
    if isinstance(body, dict) and "messages" in body and "input" not in body:
        return vllm_error(400, "messages: the chat form of /classify is not served here (this predictor classifies "
                               "texts): send {\"input\": \"text\"} or {\"input\": [\"text\", ...]}", "messages")
    return None


def raw_logits(body) -> bool:
    """Whether the client asks for vLLM's raw logits: ``use_activation`` false, or vLLM 0.10/0.11's names for it,
    ``activation`` and ``softmax`` false."""
    return False in (body.use_activation, body.activation, body.softmax)


def as_logits(probs, multilabel: bool, temperature: float | None = None):
    """Logits for the probabilities a predictor gives: for a sigmoid per label, the logit itself (log p/(1-p));
    for a softmax, the log-probabilities, which are the model's logits less one constant per text, so that a
    softmax of them gives the probabilities back, as vLLM's own tests check. ``temperature``: the one the
    probabilities were scaled at (``calibration.scaled``), taken off again, so that the logits are the model's raw
    ones (vLLM's ``use_activation`` false), not the scaled ones."""
    import numpy as np

    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p)) if multilabel else np.log(p) * (temperature or 1.0)


def unsupported(body, maxlen: int) -> tuple[str, str] | None:
    """The first vLLM field ``body`` sets to something this service does not do: (field, message), else None."""
    tokens = body.truncate_prompt_tokens
    if tokens is not None and tokens != -1 and tokens != maxlen:
        if tokens < -1:
            return "truncate_prompt_tokens", "truncate_prompt_tokens must be -1 or more"
        if tokens > maxlen:
            return "truncate_prompt_tokens", (f"truncate_prompt_tokens {tokens} is more than the model reads "
                                              f"({maxlen} tokens): give -1 or {maxlen}")
        return "truncate_prompt_tokens", (f"truncate_prompt_tokens below the model's {maxlen} is not served: texts "
                                          f"are cut at the predictor's maxlen; leave it out, or give -1 or {maxlen}")
    if body.truncation_side is not None and body.truncation_side != "right":
        return "truncation_side", (f"truncation_side '{body.truncation_side}' is not served: the predictor keeps a "
                                   "text's first tokens ('right'); leave it out or set 'right'")
    if body.truncation_direction is not None and body.truncation_direction not in ("right", "Right"):
        return "truncation_direction", (f"truncation_direction '{body.truncation_direction}' is not served: the "
                                        "predictor keeps a text's first tokens ('right'); leave it out or set 'right'")
    if body.add_special_tokens is False:
        return "add_special_tokens", ("add_special_tokens false is not served: the predictor was trained on texts "
                                      "with their [CLS]/[SEP] tokens; leave it out or set it to true")
    return None


def input_problem(value, max_batch: int) -> str | None:
    """Why a /classify ``input`` is not one text, a list of texts, or a list of [first, second] pairs of at most
    ``max_batch`` items, in one line naming the item; None when it is."""
    if isinstance(value, str):
        return None
    if len(value) > max_batch:
        return f"input holds {len(value)} items, over the limit of {max_batch} per request: split it"
    if not value:
        return "\"input\" is empty: send at least one"
    pairs = isinstance(value[0], list)

    def ids(item) -> bool:
        return isinstance(item, list) and bool(item) and all(type(t) is int for t in item)

    for i, item in enumerate(value):
        if ids(value) or ids(item):  # vLLM's list[int] and list[list[int]]: one prompt's token ids, or several
            return (f"input[{i}] is token ids: this service tokenizes texts itself with the predictor's own "
                    "tokenizer; send texts (strings)")
        if not isinstance(item, (list, str)):
            shown = "null" if item is None else type(item).__name__
            return f"input[{i}] is {shown}, not a text or a [first, second] pair"
        if isinstance(item, list) != pairs:
            return (f"input[{i}] is {'a pair' if pairs is False else 'a text'}, and input[0] is "
                    f"{'a pair' if pairs else 'a text'}: send texts (strings) or [first, second] pairs, not both")
        if pairs and (len(item) != 2 or not all(isinstance(part, str) for part in item)):
            return f"input[{i}] is not a pair: a pair is [first, second], two strings"
    return None


def classify_request(max_batch: int) -> type[BaseModel]:
    """The body of ``POST /classify``: ``input`` is one text, a list of texts, or a list of [first, second]."""
    from ktrain_recipes_tools.service.schemas import TRUNCATE

    class ClassifyRequest(BaseModel):
        model_config = ConfigDict(extra="ignore", strict=True)  # vLLM's clients send fields we do not use
        model: str | None = Field(None, description="the id GET /v1/models lists (may be left out)")
        # one loose type, checked by ``input_problem``: a union of the three shapes would answer a list of 65 or a
        # pair of three with its first branch's complaint ("Input should be a valid string")
        input: str | list = Field(description=f"one text, a list of at most {max_batch} texts, or of [first, "
                                              "second] pairs")
        truncate: bool = Field(True, description=TRUNCATE)
        # vLLM's own fields: honoured or refused by name (``unsupported``)
        use_activation: bool | None = Field(None, description="true (default): probabilities; false: logits (the "
                                            "log-probabilities of a softmax model, whose softmax gives the "
                                            "probabilities back; a sigmoid model's logits)")
        activation: bool | None = Field(None, description="vLLM 0.10's name for use_activation")
        softmax: bool | None = Field(None, description="vLLM 0.11's name for use_activation")
        truncate_prompt_tokens: int | None = Field(None, description="-1 (default) or the predictor's maxlen: cut "
                                                   "there; another number is refused")
        truncation_side: str | None = Field(None, description="'right' (default): keep a text's first tokens")
        add_special_tokens: bool | None = Field(None, description="true (default); false is refused")
        truncation_direction: str | None = Field(None, description="TEI's name, as /predict takes it: 'right' only")

    return ClassifyRequest


class ClassifyItem(BaseModel):
    index: int
    label: str
    probs: list[float]
    num_classes: int
    tokens: int
    truncated: bool
    over_threshold: list[str] | None = Field(None, description="a predictor of several labels per text: the labels "
                                             "whose probability (a sigmoid each, as vLLM gives for a "
                                             "multi_label_classification model) reaches their threshold")


class ClassifyResponse(BaseModel):
    id: str
    object: str
    created: int
    model: str
    labels: list[str]
    data: list[ClassifyItem]
    usage: dict[str, int]


def add_classify_routes(app, classify_items, batcher, max_batch: int) -> None:
    """Add /classify, /v1/classify and /v1/models to ``app``. ``classify_items(texts, pairs, truncate, response,
    name)`` is /predict's own sequence (checks, token counts, the batcher, metrics), so that both routes check, bound
    and answer alike."""
    from fastapi import Request, Response

    from ktrain_recipes.inference.prediction import label_sets
    from ktrain_recipes_tools.inference.truncation import read_fields
    from ktrain_recipes_tools.service.schemas import VLLM_ERRORS

    ClassifyRequest = classify_request(max_batch)

    async def classify(body: ClassifyRequest, request: Request, response: Response) -> Any:
        """Classify texts in vLLM's format: each item's label and its probabilities in the labels' order."""
        name = model_name(batcher.model.identity)
        if body.model is not None and body.model not in (name, name.split("@")[0]):
            return vllm_error(404, f"model '{body.model}' is not served here: this service serves '{name}' "
                                   "(GET /v1/models)", "model", "NotFoundError")
        refused = unsupported(body, int(batcher.model.identity["maxlen"]))
        if refused:
            return vllm_error(400, refused[1], refused[0])
        wrong = input_problem(body.input, max_batch)
        if wrong:
            return vllm_error(400, wrong, "input")
        given = [body.input] if isinstance(body.input, str) else body.input
        pairs = bool(given) and isinstance(given[0], list)
        result = await classify_items(None if pairs else given, given if pairs else None, body.truncate, response,
                                      "input")
        if not isinstance(result, tuple):
            return as_vllm_error(result)
        probs, used, counts = result
        names = used.classifier.classes
        sets = label_sets(used.classifier, probs)
        shown = as_logits(probs, bool(getattr(used.classifier, "multilabel", False)),
                          getattr(used.classifier, "temperature", None)) if raw_logits(body) else probs
        data = [{"index": i, "label": names[int(row.argmax())], "probs": [round(float(p), 6) for p in out],
                 "num_classes": len(names), **fields, **({"over_threshold": sets[i]} if sets else {})}
                for i, (row, out, fields) in enumerate(zip(probs, shown, read_fields(counts)))]
        tokens = sum(read for read, _ in counts)
        asked = request.headers.get("x-request-id", "")[:128]  # the caller's id, as vLLM uses it
        return {"id": f"classify-{asked or uuid.uuid4().hex}", "object": "list", "created": int(time.time()),
                "model": model_name(used.identity), "labels": list(names), "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}}

    for path in ("/classify", "/v1/classify"):
        app.post(path, response_model=ClassifyResponse, responses=VLLM_ERRORS)(classify)

    @app.get("/v1/models")
    async def models() -> dict:
        """The served predictor, as vLLM lists its models, with its labels in the order ``probs`` follow."""
        current = batcher.model
        return {"object": "list", "data": [{"id": model_name(current.identity), "object": "model",
                                            "created": int(time.time()), "owned_by": "ktrain-recipes",
                                            "labels": current.identity["labels"],
                                            "max_model_len": current.identity["maxlen"]}]}
