"""The predictor folder: what ``train``, ``distill`` and ``ethics`` write and every loader reads.

A folder holds ktrain's files (``config.json``, ``tf_model.h5``, the tokenizer files), ``metrics.json``,
optional derived ONNX copies, and ``manifest.json`` with the sha256 of each. The modules, lowest first:

* ``swaps``: staging folders, the two-rename swap, recovery from a killed swap, litter from dead processes;
* ``manifest``: writing and checking the manifest (and ``metrics.json``);
* ``saved``: a folder read once into one value (manifest, digest, metrics, what it loads as);
* ``staging``: ``staged_predictor``, the one way a folder is written;
* ``loading``: loads that run no pickle and see one whole save while another process writes.
"""
