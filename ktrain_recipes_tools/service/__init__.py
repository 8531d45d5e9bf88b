"""The HTTP service: a FastAPI app serving a saved predictor, with the bounds, health and metrics operators expect."""
