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
        truncation_direction: Literal["right"] = Field("right", description=DIRECTION)

    return PredictRequest


TRUNCATE = ("cut a text longer than the model's maxlen to its first tokens (true), or refuse the request with a 422 "
            "naming the text and its length (false)")
DIRECTION = ("which end is kept: 'right' cuts the end. One model call serves the texts of many requests, so the "
             "direction cannot vary by request: 'left' is not offered")


class Prediction(BaseModel):
    label: str
    probabilities: dict[str, float]
    tokens: int = Field(description="tokens the model read, special tokens included (at most its maxlen)")
    truncated: bool = Field(description="whether the text was longer than the model reads, and was cut")
    labels: list[str] | None = Field(None, description="a predictor of several labels per text: the labels whose "
                                     "probability reaches their threshold (chosen on validation), possibly none; "
                                     "'label' is then the most probable one")


class PredictResponse(BaseModel):
    predictions: list[Prediction]
    model: dict


class ErrorResponse(BaseModel):
    error: str


ERRORS = {status: {"model": ErrorResponse} for status in (400, 413, 422)}


def json_error(status: int, message: str, headers: dict | None = None):
    """An error as the service answers every one: JSON ``{"error": "one line"}`` (the ``ErrorResponse`` above)."""
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status, headers=headers)
