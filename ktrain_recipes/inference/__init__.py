"""A saved predictor at work: classify, int8 ONNX, streaming and scoring (the HTTP service is in ``service``)."""
