"""A saved predictor at work: ``classify`` and ``open_predictor`` (``prediction``), scores as values (``evaluate``),
several labels' thresholds (``thresholds``), calibration and withholding (``calibration``), timing (``timing``), files
of texts read in chunks (``input_files``) and the int8 ONNX path (``onnx_inference``, ``onnx_convert``). Streaming a
file to a file, Ray scoring and the HTTP service are the tools' (``ktrain_recipes_tools``)."""
