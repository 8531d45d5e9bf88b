"""vLLM's classification API, which SGLang and NVIDIA Dynamo copy: ``POST /classify`` and ``/v1/classify``, and
``GET /v1/models``, beside ``/predict``, with its bounds, auth, metrics and errors.

Request: ``{"model": "<id>", "input": "text" | ["text", ...] | [["first", "second"], ...]}`` (pairs: a list of
two-item lists, for sentence-pair predictors; ``truncate`` as in ``/predict``). Response: ``{"id", "object":
"list", "created", "model", "data": [{"index", "label", "probs", "num_classes", "tokens", "truncated"}],
"usage": {"prompt_tokens", "total_tokens", "completion_tokens": 0}}``; ``probs`` follow the order of the labels
``/v1/models`` and ``/metadata`` name. Errors are ``/predict``'s: ``{"error": "..."}`` with a 4xx for what the
client sent. ``model`` may be left out; when given it must be the id ``/v1/models`` lists (404 otherwise).
"""

import time
import uuid
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


def model_name(identity: dict) -> str:
    """The id a client names the served predictor by: its folder's name."""
    return Path(identity["folder"]).name


def classify_request(max_batch: int) -> type[BaseModel]:
    """The body of ``POST /classify``: ``input`` is one text, a list of texts, or a list of [first, second]."""
    from ktrain_recipes_tools.service.schemas import TRUNCATE

    class ClassifyRequest(BaseModel):
        model_config = ConfigDict(extra="ignore", strict=True)  # vLLM's clients send fields we do not use
        model: str | None = Field(None, description="the id GET /v1/models lists (may be left out)")
        input: (str | Annotated[list[str], Field(max_length=max_batch)]
                | Annotated[list[Annotated[list[str], Field(min_length=2, max_length=2)]], Field(max_length=max_batch)]
                ) = Field(description=f"one text, a list of at most {max_batch} texts, or of [first, second] pairs")
        truncate: bool = Field(True, description=TRUNCATE)

    return ClassifyRequest


class ClassifyItem(BaseModel):
    index: int
    label: str
    probs: list[float]
    num_classes: int
    tokens: int
    truncated: bool


class ClassifyResponse(BaseModel):
    id: str
    object: str
    created: int
    model: str
    data: list[ClassifyItem]
    usage: dict[str, int]


def add_classify_routes(app, classify_items, batcher, max_batch: int) -> None:
    """Add /classify, /v1/classify and /v1/models to ``app``. ``classify_items(texts, pairs, truncate, response,
    name)`` is /predict's own sequence (checks, token counts, the batcher, metrics), so that both routes check, bound
    and answer alike."""
    from fastapi import Response
    from fastapi.responses import JSONResponse

    from ktrain_recipes_tools.service.schemas import ERRORS

    ClassifyRequest = classify_request(max_batch)
    errors = {**ERRORS, 404: ERRORS[422]}

    async def classify(body: ClassifyRequest, response: Response) -> Any:
        """Classify texts in vLLM's format: each item's label and its probabilities in the labels' order."""
        name = model_name(batcher.model.identity)
        if body.model is not None and body.model != name:
            return JSONResponse({"error": f"model '{body.model}' is not served here: this service serves '{name}' "
                                          "(GET /v1/models)"}, status_code=404)
        given = [body.input] if isinstance(body.input, str) else body.input
        pairs = bool(given) and isinstance(given[0], list)
        result = await classify_items(None if pairs else given, given if pairs else None, body.truncate, response,
                                      "input")
        if not isinstance(result, tuple):
            return result
        probs, used, counts = result
        names = used.classifier.classes
        data = [{"index": i, "label": names[int(row.argmax())], "probs": [round(float(p), 6) for p in row],
                 "num_classes": len(names), "tokens": read, "truncated": total > read}
                for i, (row, (read, total)) in enumerate(zip(probs, counts))]
        tokens = sum(read for read, _ in counts)
        return {"id": f"classify-{uuid.uuid4().hex}", "object": "list", "created": int(time.time()),
                "model": model_name(used.identity), "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}}

    for path in ("/classify", "/v1/classify"):
        app.post(path, response_model=ClassifyResponse, responses=errors)(classify)

    @app.get("/v1/models")
    async def models() -> dict:
        """The served predictor, as vLLM lists its models, with its labels in the order ``probs`` follow."""
        current = batcher.model
        return {"object": "list", "data": [{"id": model_name(current.identity), "object": "model",
                                            "owned_by": "ktrain-recipes", "labels": current.identity["labels"],
                                            "max_model_len": current.identity["maxlen"]}]}
