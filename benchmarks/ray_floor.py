"""Ray Serve's own floor on this machine: a deployment that does nothing (answers a fixed JSON body to POST
/predict), behind the same HTTP proxy settings as `serve --engine ray`, loaded by the same wrk script as serve-bench
at 1 client. What our Ray service adds above the single process, minus this floor, is what our code adds to Ray.

    python benchmarks/ray_floor.py OUT.json [--seconds 20]

Ray's published figure for a no-op deployment is a p50 of 2.23 ms on its own hardware; this measures the same kind
of deployment here, so that the comparison is made on one machine.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()

    import httpx
    import ray
    from ray import serve
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from ktrain_recipes.inference.timing import cpu_features
    from ktrain_recipes_tools.studies.measure import describe_machine
    from ktrain_recipes_tools.studies.serve_bench import _level, free_port

    @serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 1})
    class NoOp:
        async def __call__(self, request: Request) -> JSONResponse:
            await request.body()
            return JSONResponse({"predictions": [{"label": "joy", "probabilities": {"joy": 1.0}}]})

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, logging_level="ERROR")
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port},
                    logging_config={"log_level": "WARNING", "enable_access_log": False})
        serve.run(NoOp.bind(), name="noop", route_prefix="/", blocking=False)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                if httpx.post(url + "/predict", json={"texts": ["hi"]}).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        _level("ray_noop", url, 4, 3)  # warm-up, as serve-bench does
        level = _level("ray_noop", url, 1, args.seconds)
    finally:
        serve.shutdown()
        ray.shutdown()
    result = {"what": "Ray Serve no-op deployment, 1 replica, 1 client (wrk -t 1 -c 1)", "cpu": describe_machine(),
              "cpu_features": cpu_features(), "seconds": args.seconds, "level": level}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["level"]))


if __name__ == "__main__":
    main()
