"""The service's request and response bodies (pydantic), as its OpenAPI page shows them."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


def predict_request(max_batch: int) -> type[BaseModel]:
    """The body of ``POST /predict``: ``texts`` or ``pairs``, at most ``max_batch`` of them."""

    class PredictRequest(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        texts: list[str] | None = Field(None, description="texts to classify (single-text predictors)",
                                        max_length=max_batch)
        pairs: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None = Field(
            None, description="[first, second] text pairs (sentence-pair predictors)", max_length=max_batch)
        truncate: bool = Field(True, description=TRUNCATE)
        # TEI spells it "Right": both are its one value
        truncation_direction: Literal["right", "Right"] = Field("right", description=DIRECTION)
        min_confidence: float | None = Field(None, gt=0, le=1, description=MIN_CONFIDENCE)

    return PredictRequest


TRUNCATE = ("cut a text longer than the model's maxlen to its first tokens (true), or refuse the request with a 422 "
            "naming the text and its length (false)")
MIN_CONFIDENCE = ("answer only texts whose top probability reaches this (in (0, 1]; choose it on validation with "
                  "`ktrain-recipes calibrate --accuracy`): the others get \"label\": null and \"withheld\": true, "
                  "their probabilities still given. Predictors of one label per text only")
DIRECTION = ("which end is kept: 'right' cuts the end. One model call serves the texts of many requests, so the "
             "direction cannot vary by request: 'left' is not offered")


class Prediction(BaseModel):
    label: str | None = Field(description="the most probable label; null when the request's min_confidence "
                              "withheld it")
    probabilities: dict[str, float]
    tokens: int = Field(description="tokens the model read, special tokens included (at most its maxlen)")
    truncated: bool = Field(description="whether the text was longer than the model reads, and was cut")
    labels: list[str] | None = Field(None, description="a predictor of several labels per text: the labels whose "
                                     "probability reaches their threshold (chosen on validation), possibly none; "
                                     "'label' is then the most probable one")
    withheld: bool | None = Field(None, description="with min_confidence: whether the answer was withheld (the "
                                  "top probability under it)")


class PredictResponse(BaseModel):
    predictions: list[Prediction]
    model: dict


class ErrorResponse(BaseModel):
    error: str


class VllmError(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: int


class VllmErrorResponse(BaseModel):
    """vLLM's error shape, which its routes (``/classify``, ``/v1/classify``) answer every error in."""

    error: VllmError


ERRORS = {status: {"model": ErrorResponse} for status in (400, 413, 422)}
VLLM_ROUTES = ("/classify", "/v1/classify")
VLLM_ERRORS = {status: {"model": VllmErrorResponse} for status in (400, 401, 404, 408, 413, 429, 431, 500, 503)}
KINDS = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError", 408: "BadRequestError",
         413: "BadRequestError", 422: "BadRequestError", 429: "RateLimitError", 431: "BadRequestError",
         503: "ServiceUnavailableError"}


def error_content(status: int, message: str, path: str | None = None, param: str | None = None,
                  kind: str | None = None) -> dict:
    """The one error body of every layer (the connection, the guard, the routes): ``{"error": "one line"}``, or on
    vLLM's routes vLLM's own ``{"error": {"message", "type", "param", "code"}}``."""
    if path in VLLM_ROUTES:
        return {"error": {"message": message, "type": kind or KINDS.get(status, "InternalServerError"),
                          "param": param, "code": status}}
    return {"error": message}


def json_error(status: int, message: str, headers: dict | None = None, path: str | None = None):
    """An error as the service answers every one (``error_content``), as a response."""
    from fastapi.responses import JSONResponse

    return JSONResponse(error_content(status, message, path), status_code=status, headers=headers)
