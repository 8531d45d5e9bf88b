"""Segment ids (``token_type_ids``): whether a model reads them, decided in one place.

A sentence pair reaches a BERT-architecture model as ``[CLS] first [SEP] second [SEP]``, with segment id 0 on
the first sentence and 1 on the second: that is how those models were pre-trained to tell the two apart.
ktrain 0.41.4 decides whether to feed segment ids by looking for ``token_type_ids`` in
``model.call.__code__.co_varnames``. Since transformers wraps every TF model's ``call`` in ``unpack_inputs``
(4.2x onwards), that code object holds only ``(self, args, kwargs, ...)``, so the check is False for every model,
BERT included, and the second sentence of every pair arrives marked as segment 0.

Here the answer comes from the model's real signature and its configuration: a model takes segment ids when its
``call`` names ``token_type_ids`` and its config has more than one segment (``type_vocab_size > 1``). That is True
for BERT, MiniLM, ALBERT and ELECTRA; False for DistilBERT (no such input), RoBERTa (``type_vocab_size`` 1) and
MPNet (no such input). Training hands the answer to ktrain's preprocessor (``use_token_type_ids``) and the
predictor folder records it (``manifest.json``'s ``segment_ids``), so that every later load feeds the same inputs.
"""

from __future__ import annotations

import inspect

MANIFEST_KEY = "segment_ids"


def takes_segment_ids(config) -> bool:
    """Return True when the TF sequence classifier of ``config`` (a transformers config) reads segment ids.

    Args:
      config: a ``transformers.PretrainedConfig`` (``AutoConfig.from_pretrained(folder)``, or ``model.config``).
    """
    from transformers.models.auto.modeling_tf_auto import TF_MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING

    try:
        model_class = TF_MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING[type(config)]
    except KeyError:
        return False  # not a TF sequence classifier transformers knows: ktrain could not train it either
    named = "token_type_ids" in inspect.signature(model_class.call).parameters
    return named and (getattr(config, "type_vocab_size", 0) or 0) > 1


def recorded_segment_ids(manifest: dict) -> bool:
    """Whether a saved predictor was trained with segment ids, from its manifest.

    A folder saved before the manifest recorded it was trained without them (the co_varnames check above was
    False for every model), so it keeps being fed without them: it answers exactly as it did.
    """
    return bool(manifest.get(MANIFEST_KEY, False))
