"""ktrain_recipes_tools: the tools beside the helper. The helper (``import ktrain_recipes as kr``) is what a learner's
notebooks reach; this package holds what an operator or a study runs on top of it:

- the command line (``cli``, one module per command under ``commands/``: ``ktrain-recipes train ...``);
- the HTTP service (``service/``) and Ray Serve (extra ``[serve]``, ``[scale]``);
- streaming and Ray scoring of large files (``inference/``; extra ``[scale]`` for Ray);
- distillation (``training/``: the student, its teacher's logits, transfer data);
- the studies the course reports (``studies/``: the four architectures' cost, the published models, ETHICS).

Imports point one way: these modules import the helper, the helper never imports them (a contract import-linter
checks: ``make lint``). Notebooks 03, 06, 08, 09, 11 and 12 import what they show from here by name, as d2l's
chapters import ``d2l``: ``import ktrain_recipes_tools as krt``. The names load their module on first use.
"""

import ktrain_recipes  # noqa: F401  (first: the helper's compatibility shims, before anything imports TensorFlow)


# What notebooks 03, 06, 08, 09, 11 and 12 show, by the module that owns each (tests/test_imports.py checks that every
# one is shown in a notebook). The last group are the helper's own functions those notebooks use that the helper's
# face leaves out.
_PUBLIC = {
    "studies.params": {
        "parameter_table": "parameters by part from each model's configuration",
        "albert_arithmetic": "ALBERT's two savings as arithmetic",
    },
    "studies.cost": {
        "CostSettings": "what cost_table measures",
        "cost_table": "training and inference cost of each architecture at its real size",
    },
    "studies.finetuned": {
        "published_models": "the public fine-tuned emotion models and their cards' figures",
        "published_table": "those figures as a table",
        "wrap_finetuned": "ktrain's tutorial A3 wrap of a fine-tuned classifier, with its label order checked",
        "compare_finetuned": "those models scored on the same split as ours",
    },
    "studies.compare": {
        "compare_runs": "saved runs side by side from their metrics.json",
        "recommend": "a model for accuracy, latency and memory, argued from the figures",
    },
    "studies.bench": {
        "side_by_side": "saved models as fp32 and int8 predictors, scored and timed in turn: one table",
    },
    "studies.ethics_data": {
        "get_task": "an ETHICS task by name: its files, columns and groups",
        "load_ethics": "an ETHICS task with whole groups held out for validation",
        "exact_match": "ETHICS' score: groups whose rows are all right",
    },
    "studies.ethics": {
        "run_ethics": "a task trained and scored, the ranker for utilitarianism",
        "committed_ethics_results": "our committed full ETHICS runs, per model",
        "results_table": "our runs beside the published leaderboard",
    },
    "training.distill": {
        "DistillSettings": "distillation's settings (teacher, layers, temperature, alpha, copies): ktrain has none",
        "distill": "a student trained from a saved teacher's logits through ktrain's learner",
        "distillation_loss": "the loss on labels and the teacher's softened probabilities",
        "pack_targets": "the teacher's logits beside each label in ktrain's dataset",
        "teacher_logits_for": "a teacher's logits for texts read with its own tokenizer",
        "label_accuracy": "accuracy on the label half of packed targets",
        "ready_for_prediction": "the student recompiled for ktrain.get_predictor",
    },
    "training.students": {
        "pretrained_classifier": "a pretrained checkpoint with a fresh head, to cut into a student",
        "cut_layers": "a student keeping every other encoder layer of a BERT-family model",
    },
    "training.augment": {"augment": "altered copies of texts for distillation's transfer data"},
    "studies.label_sets": {
        "tfidf_baseline": "several labels per text: TF-IDF and one logistic regression per label, the bar to beat",
        "scored": "thresholds chosen on validation, then validation and the test split scored with them",
        "grouping": "a grouping of the labels (GoEmotions' Ekman six) from its file",
        "grouped": "a grouping's probabilities: each group's the largest of its labels'",
        "grouped_truth": "each text's groups from its labels",
    },
    # the helper's, shown only in these notebooks
    "ktrain_recipes.models": {
        "hub_reachable": "whether the hub answers, so that a cell can skip a download instead of hanging on it",
    },
    "ktrain_recipes.training.recipe": {
        "transformer_preprocessor": "text.Transformer told from the model whether it reads segment ids",
    },
    "ktrain_recipes.predictor.saved": {"read_manifest": "a saved predictor's manifest, checked"},
    "ktrain_recipes.inference.thresholds": {
        "choose_thresholds": "one threshold for all labels and one per label, chosen on validation",
        "score_with": "macro-F1, micro-F1, exact match and per label with the thresholds (and with 0.5 beside)",
    },
    "ktrain_recipes.inference.calibration": {
        "calibration_scores": "accuracy, expected calibration error, log-loss and Brier score of probabilities",
        "fit_temperature": "the temperature that minimises log-loss on validation (scipy's bounded search)",
        "scaled": "probabilities at a temperature: a softmax of log p / T, every label kept",
        "coverage_curve": "the accuracy of the answered texts at each confidence threshold",
        "choose_min_confidence": "the lowest confidence at which the answered texts reach a named accuracy",
        "selective_scores": "coverage and the answered texts' accuracy at a confidence threshold",
    },
    "ktrain_recipes.predictor.staging": {
        "record_temperature": "a temperature written into a saved predictor, which every loader then applies",
    },
    "ktrain_recipes.plots": {
        "plot_latency_vs_accuracy": "models as bubbles: latency against accuracy, area by size",
        "plot_parameters": "each model's parameters by part",
        "save_figure": "a figure written as PNG beside a run",
    },
}
_OWNER = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = list(_OWNER)


def __getattr__(name: str):
    if name in _OWNER:
        import importlib

        module = _OWNER[name]
        module = module if module.startswith("ktrain_recipes.") else f"{__name__}.{module}"
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # once loaded, a plain attribute
        return value
    raise AttributeError(f"module 'ktrain_recipes_tools' has no attribute {name!r}")


def __dir__():
    # the public surface: the names above, not the submodules an import leaves as attributes
    return sorted(set(__all__) | {n for n in globals() if n.startswith("_")})
