"""Training on several devices with TensorFlow's own engine (``--distribute``), as ktrain's FAQ shows: the
classifier and the learner are built inside a ``tf.distribute`` strategy's scope.

* ``mirrored``: every visible GPU, or ``--devices N`` logical devices carved out of the CPU (to try it on a
  machine without GPUs: it is not faster there). With no GPU and no ``--devices`` it is one replica on the
  CPU, so the same command runs everywhere.
* ``multiworker``: ``MultiWorkerMirroredStrategy`` over the machines that ``TF_CONFIG`` lists; every worker
  runs the same command, and only the chief (worker 0) saves the predictor.

The batch size is per device: the global batch is ``--batch-size`` times the replicas, and the run says so.
"""

from __future__ import annotations

import contextlib
import json
import os

from ktrain_recipes.errors import RecipesError

def make_strategy(kind: str, devices: int | None = None):
    """Return the strategy for ``kind`` (None for 'none'). Call before TensorFlow runs its first op when
    ``devices`` splits the CPU: logical devices can only be set up before that."""
    if kind == "none":  # RecipeConfig.check refuses --devices without mirrored
        return None
    import tensorflow as tf

    if kind == "multiworker":
        check_tf_config(os.environ.get("TF_CONFIG"))
        return tf.distribute.MultiWorkerMirroredStrategy()
    gpus = tf.config.list_physical_devices("GPU")
    if devices and not gpus:
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * devices)
        except RuntimeError:
            if len(tf.config.list_logical_devices("CPU")) != devices:
                raise RecipesError("--devices must be set before TensorFlow starts: run it in a fresh process "
                                   "(a new Python, or restart the notebook's kernel)") from None
        names = [d.name for d in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(names)
    return tf.distribute.MirroredStrategy()


_SEE = "see README, 'Training on several devices'"


def check_tf_config(raw: str | None) -> dict:
    """Check TF_CONFIG's shape before TensorFlow reads it (TensorFlow trains alone on a misspelt key, and waits
    without end for a worker it was told of): ``{"cluster": {"worker": ["host:port", ...], ...}, "task":
    {"type": "worker", "index": N}}``. Return it parsed."""
    if not raw:
        raise RecipesError(f"--distribute multiworker reads the cluster from TF_CONFIG, which is not set: {_SEE}")
    try:
        config = json.loads(raw)
    except ValueError:
        raise RecipesError(f"TF_CONFIG is not valid JSON: {_SEE}") from None
    if not isinstance(config, dict):
        raise RecipesError(f"TF_CONFIG must be a JSON object with 'cluster' and 'task', got {type(config).__name__}: "
                           f"{_SEE}")
    unknown = set(config) - {"cluster", "task", "environment", "rpc_layer"}
    if unknown or "cluster" not in config or "task" not in config:
        raise RecipesError(f"TF_CONFIG needs the keys 'cluster' and 'task'"
                           f"{' (unknown: ' + ', '.join(sorted(unknown)) + ')' if unknown else ''}: {_SEE}")
    cluster, task = config["cluster"], config["task"]
    if not isinstance(cluster, dict) or not cluster:
        raise RecipesError(f"TF_CONFIG's 'cluster' must map job names to address lists: {_SEE}")
    for job, addresses in cluster.items():
        if job not in ("chief", "worker", "evaluator", "ps") or not isinstance(addresses, list) or not addresses \
                or not all(isinstance(a, str) and a.rpartition(":")[2].isdigit() for a in addresses):
            raise RecipesError(f"TF_CONFIG's cluster '{job}' must be chief, worker, evaluator or ps, with a list of "
                               f"'host:port' addresses: {_SEE}")
    if not isinstance(task, dict) or task.get("type") not in cluster or isinstance(task.get("index"), bool) \
            or not isinstance(task.get("index"), int):
        raise RecipesError(f"TF_CONFIG's 'task' must be {{\"type\": one of {', '.join(cluster)}, \"index\": N}}: "
                           f"{_SEE}")
    if not 0 <= task["index"] < len(cluster[task["type"]]):
        raise RecipesError(f"TF_CONFIG's task index {task['index']} is past the {len(cluster[task['type']])} "
                           f"'{task['type']}' address(es) of its cluster: {_SEE}")
    return config


def is_chief(strategy) -> bool:
    """True where the predictor is saved: always without multi-worker, else on worker 0 only."""
    if strategy is None or not hasattr(strategy, "cluster_resolver") or strategy.cluster_resolver is None:
        return True
    resolver = strategy.cluster_resolver
    return resolver.task_type in (None, "chief") or (resolver.task_type == "worker" and resolver.task_id == 0)


def scope(strategy):
    """The strategy's scope, or a no-op without one."""
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def replicas(strategy) -> int:
    return strategy.num_replicas_in_sync if strategy is not None else 1
