"""The service's latency by length, read from two scrapes of its ``/metrics``: what serve-bench reports per level,
computed as Prometheus's ``histogram_quantile`` computes it."""


def histogram_quantile(q: float, edges: list[float], cumulative: list[float]) -> float:
    """The ``q`` quantile of a histogram given by its buckets' upper edges (the last +Inf) and cumulative counts,
    linear within the bucket it falls in, as Prometheus's ``histogram_quantile``."""
    rank = q * cumulative[-1]
    for i, (edge, count) in enumerate(zip(edges, cumulative)):
        if count >= rank:
            low, below = (0.0, 0.0) if i == 0 else (edges[i - 1], cumulative[i - 1])
            if edge == float("inf"):
                return low  # past the last finite edge: its edge is all a histogram can say
            return low + (edge - low) * (rank - below) / max(count - below, 1e-9)
    return edges[-2]


def by_length(before: str, after: str) -> dict:
    """Requests and latency percentiles per length bucket, from two scrapes of the service's /metrics (the
    ``ktrain_recipes_request_by_length_seconds`` histogram): what one level added, read as Prometheus's
    ``histogram_quantile`` reads it (linear within a bucket)."""
    from prometheus_client.parser import text_string_to_metric_families

    def buckets(text: str) -> dict:
        out: dict = {}
        for family in text_string_to_metric_families(text):
            if family.name != "ktrain_recipes_request_by_length_seconds":
                continue
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    out.setdefault(sample.labels["tokens"], {})[float(sample.labels["le"])] = sample.value
        return out

    old, new = buckets(before), buckets(after)
    result = {}
    for name, counts in new.items():
        edges = sorted(counts)
        cumulative = [counts[e] - old.get(name, {}).get(e, 0) for e in edges]
        total = cumulative[-1]
        if total <= 0:
            continue

        result[name] = {"requests": int(total), "p50_ms": round(1000 * histogram_quantile(0.5, edges, cumulative), 1),
                        "p99_ms": round(1000 * histogram_quantile(0.99, edges, cumulative), 1)}
    return result
