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
import signal
import socket
import time

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.network import connection_error, split_address

def make_strategy(kind: str, devices: int | None = None, worker_timeout_s: float = 300.0):
    """Return the strategy for ``kind`` (None for 'none'). Call before TensorFlow runs its first op when
    ``devices`` splits the CPU: logical devices can only be set up before that. ``multiworker`` returns once
    every worker has joined (see ``join_cluster``)."""
    if kind == "none":  # RecipeConfig.check refuses --devices without mirrored
        return None
    import tensorflow as tf

    if kind == "multiworker":
        return join_cluster(check_tf_config(os.environ.get("TF_CONFIG")), worker_timeout_s)
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


_SEE = "see docs/scaling.md, 'Training on several devices'"


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
                or not all(isinstance(a, str) and _valid_port(a.rpartition(":")[2]) and a.rpartition(":")[0]
                           for a in addresses):
            raise RecipesError(f"TF_CONFIG's cluster '{job}' must be chief, worker, evaluator or ps, with a list of "
                               f"'host:port' addresses (port 1-65535): {_SEE}")
    if not isinstance(task, dict) or task.get("type") not in cluster or isinstance(task.get("index"), bool) \
            or not isinstance(task.get("index"), int):
        raise RecipesError(f"TF_CONFIG's 'task' must be {{\"type\": one of {', '.join(cluster)}, \"index\": N}}: "
                           f"{_SEE}")
    if not 0 <= task["index"] < len(cluster[task["type"]]):
        raise RecipesError(f"TF_CONFIG's task index {task['index']} is past the {len(cluster[task['type']])} "
                           f"'{task['type']}' address(es) of its cluster: {_SEE}")
    return config


def join_cluster(tf_config: dict, timeout_s: float):
    """Wait until every worker of ``tf_config`` is up, then make the ``MultiWorkerMirroredStrategy``.

    TensorFlow waits for the other workers inside C++, holding Python's lock, with no deadline, and its
    preemption notifier swallows SIGTERM: a worker that never started kept the others silent and deaf until
    SIGKILL. So the waiting happens here first, in Python: this worker answers on its own address (a bare
    listening socket) while it polls the others' addresses, says every 10 s which do not answer, stops on Ctrl-C
    or SIGTERM, and gives up with one line after ``timeout_s``. A peer answers either from this wait or from
    TensorFlow's server, so workers started in any order meet. TensorFlow's own registration gets the same
    deadline, should a worker vanish between the two.
    """
    import tensorflow as tf
    from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
    from tensorflow.python.distribute import multi_worker_util
    from tensorflow.python.eager import context

    task = tf_config["task"]
    own = tf_config["cluster"][task["type"]][task["index"]]
    peers = [(job, i, address) for job, addresses in tf_config["cluster"].items()
             for i, address in enumerate(addresses) if (job, i) != (task["type"], task["index"])]
    wait_for(peers, int(own.rpartition(":")[2]), timeout_s)
    if context.context().coordination_service is None:  # what the strategy would set, with a deadline
        cluster = tf.train.ClusterSpec(tf_config["cluster"])
        jobs = [coordination_config_pb2.CoordinatedJob(name=job, num_tasks=cluster.num_tasks(job))
                for job in ("chief", "worker") if job in cluster.jobs]
        context.context().configure_coordination_service(
            service_type="standalone", service_leader=multi_worker_util.coordination_leader(cluster),
            coordinated_jobs=jobs, cluster_register_timeout_in_ms=int(timeout_s * 1000))
    try:
        return tf.distribute.MultiWorkerMirroredStrategy()
    except tf.errors.OpError as exc:
        raise RecipesError(f"the cluster did not form within {timeout_s:g} s ({type(exc).__name__}): start every "
                           "worker of TF_CONFIG with the same command, or raise --worker-timeout-s") from None


def wait_for(peers: list[tuple[str, int, str]], port: int, timeout_s: float) -> None:
    """Answer on ``port`` and poll ``peers`` (job, index, "host:port") until each accepts a connection."""

    def stop(signum, frame):
        raise RecipesError(f"stopped by {signal.Signals(signum).name} while waiting for the other workers")

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("", port))
        listener.listen(64)  # never accepted: the kernel completes a peer's connect, which is all it asks
    except OSError as exc:
        listener.close()
        raise RecipesError(f"cannot listen on this worker's port {port} from TF_CONFIG ({exc.strerror}): is "
                           "another process using it?") from None
    previous = signal.signal(signal.SIGTERM, stop)
    start = last = time.monotonic()
    try:
        while True:
            absent = []
            for job, i, address in peers:
                if connection_error(*split_address(address), timeout_s=1):
                    absent.append(f"{job} {i} ({address})")
            if not absent:
                return
            waited = time.monotonic() - start
            if waited >= timeout_s:
                raise RecipesError(f"the cluster did not form within {timeout_s:g} s: {', '.join(absent)} did not "
                                   "start. Start every worker of TF_CONFIG with the same command, or raise "
                                   "--worker-timeout-s")
            if time.monotonic() - last >= 10:
                last = time.monotonic()
                note(f"waiting for {', '.join(absent)} to start ({waited:.0f} s of {timeout_s:g} s)")
            time.sleep(0.5)
    finally:
        signal.signal(signal.SIGTERM, previous)
        listener.close()


def _valid_port(text: str) -> bool:
    """An ASCII port number from 1 to 65535 (``str.isdigit`` also accepts superscripts such as '²')."""
    return text.isascii() and text.isdigit() and 1 <= int(text) <= 65535


def is_chief(strategy) -> bool:
    """True where the predictor is saved: always without multi-worker, else on the one chief task."""
    if strategy is None or not hasattr(strategy, "cluster_resolver") or strategy.cluster_resolver is None:
        return True
    resolver = strategy.cluster_resolver
    return chief_task(resolver.cluster_spec().jobs, resolver.task_type, resolver.task_id)


def chief_task(jobs, task_type: str | None, task_id: int | None) -> bool:
    """Whether this task saves: the ``chief`` task when the cluster has one, else worker 0 (TensorFlow's rule), so
    that exactly one task writes the predictor."""
    if task_type is None:
        return True
    if "chief" in jobs:
        return task_type == "chief"
    return task_type == "worker" and task_id == 0


def scope(strategy):
    """The strategy's scope, or a no-op without one."""
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def replicas(strategy) -> int:
    return strategy.num_replicas_in_sync if strategy is not None else 1
