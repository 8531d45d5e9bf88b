"""The batching policy: how many texts go through one model call, and how many a reader hands on at once.

Each size is named once, here, and passed down to whatever loads a model: the service's ``--max-batch``
(default ``MODEL_BATCH``) becomes the batch size of the model it loads, so that a batch the service forms is
exactly one model call, whichever backend (int8 ONNX or ktrain) serves it.
"""

# texts in one model call: the int8 predictor's batch and the service's --max-batch default. 64 keeps a batch's
# padding small (texts are sorted by length first) while amortising each call's fixed cost.
MODEL_BATCH = 64
# ktrain's own predictor batch size (ktrain.get_predictor's default), kept for ktrain's predictors
KTRAIN_BATCH = 32
# classify(): texts sorted by length and handed to the model this many at a time (the model splits them into its
# own batches); bounds the memory of one length sort's slice
CLASSIFY_CHUNK = 256
# predict --input: rows read, scored and written per chunk, in constant memory (--chunk-size)
STREAM_CHUNK = 10_000
