"""The service's request and response bodies (pydantic), as its OpenAPI page shows them."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


def predict_request(max_batch: int) -> type[BaseModel]:
    """The body of ``POST /predict``: ``texts`` or ``pairs``, at most ``max_batch`` of them."""

    class PredictRequest(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        texts: list[str] | None = Field(None, description="texts to classify (single-text predictors)",
                                        max_length=max_batch)
        pairs: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None = Field(
            None, description="[first, second] text pairs (sentence-pair predictors)", max_length=max_batch)

    return PredictRequest


class Prediction(BaseModel):
    label: str
    probabilities: dict[str, float]


class PredictResponse(BaseModel):
    predictions: list[Prediction]
    model: dict


class ErrorResponse(BaseModel):
    error: str


ERRORS = {status: {"model": ErrorResponse} for status in (400, 413, 422)}
