"""The service's Prometheus metrics (prometheus-client), one registry per app: requests by route and status,
latency and queue-time histograms, queue depth, batch sizes, model calls, reloads, and the save being served."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

# seconds: from 1 ms (the int8 model on one short text) to 10 s (a deadline)
LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# finer, for the latency by length: a p99 read from these buckets is off by at most a bucket's width
FINE_LATENCY = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.125,
                0.15, 0.2, 0.3, 0.5, 1.0, 2.5, 5.0, 10.0)
# a request's length: the most tokens the model reads of any of its items
LENGTHS = ((16, "1-16"), (32, "17-32"), (64, "33-64"), (128, "65-128"), (None, "129+"))


def length_bucket(tokens: int) -> str:
    """The ``tokens`` label of a request whose longest item the model reads ``tokens`` of."""
    return next(name for most, name in LENGTHS if most is None or tokens <= most)


class ServiceMetrics:
    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("ktrain_recipes_requests", "HTTP requests answered, by route and status",
                                ["route", "status"], registry=r)
        self.latency = Histogram("ktrain_recipes_request_seconds", "time to answer a /predict request",
                                 buckets=LATENCY, registry=r)
        self.latency_by_length = Histogram(
            "ktrain_recipes_request_by_length_seconds", "time to answer a classification request, by the tokens the "
            "model reads of its longest item", ["tokens"], buckets=FINE_LATENCY, registry=r)
        for _, name in LENGTHS:  # every series from 0 (see below)
            self.latency_by_length.labels(name)
        self.queue_time = Histogram("ktrain_recipes_queue_seconds", "time a /predict request waited for the model",
                                    buckets=LATENCY, registry=r)
        self.queue_depth = Gauge("ktrain_recipes_queue_texts", "texts waiting for the model", registry=r)
        self.batch = Histogram("ktrain_recipes_batch_texts", "texts per model call",
                               buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256), registry=r)
        self.model_calls = Counter("ktrain_recipes_model_calls", "model calls, by outcome", ["outcome"], registry=r)
        self.reloads = Counter("ktrain_recipes_reloads", "hot swaps, by outcome", ["outcome"], registry=r)
        self.withheld = Counter("ktrain_recipes_withheld_texts", "texts given no label: their top probability "
                                "under the request's min_confidence", registry=r)
        self.truncated = Counter("ktrain_recipes_truncated_texts", "texts cut to the model's maxlen", registry=r)
        self.tokens = Histogram("ktrain_recipes_tokens_read", "tokens the model read per text",
                                buckets=(8, 16, 32, 64, 128, 256, 512), registry=r)
        self.serving = Info("ktrain_recipes_serving", "the save being served", registry=r)
        for outcome in ("ok", "failed"):  # every series from 0 at start, as Prometheus advises: a rate() over a
            self.model_calls.labels(outcome)  # series that appears only at its first event misses that event, and
            self.reloads.labels(outcome)      # each Ray Serve replica shows the same families before its first call

    def refused(self, status: int) -> None:
        """A connection answered before any route saw its request (a head too large or too slow, a body too slow,
        bytes that are not HTTP): counted under the route "(connection)"."""
        self.requests.labels("(connection)", str(status)).inc()

    def model_call(self, texts: int, ok: bool) -> None:
        self.model_calls.labels("ok" if ok else "failed").inc()
        if ok:
            self.batch.observe(texts)

    def read(self, counts: list[tuple[int, int]]) -> None:
        """Count what the model read of each text answered: its tokens, and whether it was cut."""
        for read, total in counts:
            self.tokens.observe(read)
            if total > read:
                self.truncated.inc()

    def reload(self, ok: bool) -> None:
        self.reloads.labels("ok" if ok else "failed").inc()

    def serve(self, identity: dict) -> None:
        self.serving.info({k: str(identity.get(k)) for k in ("save_id", "backend", "model_id", "manifest_sha256")})

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)
