"""A saved predictor at work: checked saves and loads, classify, int8 ONNX, streaming, scoring, the HTTP service."""
