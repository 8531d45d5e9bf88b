"""``scale-bench``: scoring a large corpus with the int8 model, measured in one run on one machine.

Rows, each in its own process (so peak memory is its own): (a) the in-memory int8 path (``classify`` on a
list) over the first ``in_memory`` texts; (b) ``predict --input`` streaming the whole file; (c) ``--engine
ray`` in local mode over the first ``ray_texts`` texts. The corpus is the emotion texts repeated.
"""

import json
import subprocess
import sys
from pathlib import Path

from ktrain_recipes.errors import RecipesError

MARK = ".scale-bench"  # in a --work folder this command made: it may write there again

IN_MEMORY = """
import json, resource, sys, time
from ktrain_recipes.inference.onnx_inference import load_int8_predictor
from ktrain_recipes.inference.prediction import classify
model = load_int8_predictor(sys.argv[1])
with open(sys.argv[2]) as f:
    texts = [next(f).rstrip("\\n") for _ in range(int(sys.argv[3]))]
start = time.perf_counter()
for i in range(0, len(texts), 10_000):  # the same chunks as streaming: only reading and writing differ
    classify(model, texts[i:i + 10_000], proba=True)
seconds = time.perf_counter() - start
print(json.dumps({"texts": len(texts), "seconds": seconds,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

STREAMING = """
import json, resource, sys, time
from ktrain_recipes.inference.onnx_inference import load_int8_predictor
from ktrain_recipes_tools.inference.streaming import predict_file
model = load_int8_predictor(sys.argv[1])
start = time.perf_counter()
n = predict_file(model, sys.argv[2], sys.argv[3], fmt="csv", proba=True, progress=False)
print(json.dumps({"texts": n, "seconds": time.perf_counter() - start,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

RAY = """
import json, resource, sys, time
from ktrain_recipes_tools.inference.ray_scoring import predict_with_ray
start = time.perf_counter()
n = predict_with_ray(sys.argv[1], sys.argv[2], sys.argv[3], fmt="csv", proba=True, num_cpus=int(sys.argv[4]))
print(json.dumps({"texts": n, "seconds": time.perf_counter() - start,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_corpus(texts: list[str], n: int, path: Path) -> Path:
    """``n`` lines: ``texts`` repeated in order."""
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(texts[i % len(texts)] + "\n")
    return path


def work_folder(work: str | Path) -> Path:
    """The ``--work`` folder, made if new: one that holds anything this command did not make (a user's corpus.txt,
    a predictor folder) is refused, since the corpus and the outputs are written over their names there."""
    work = Path(work)
    if work.is_symlink() or (work.exists() and not work.is_dir()):
        raise RecipesError(f"--work '{work}' is not a folder: name a new or empty folder")
    if work.is_dir() and any(work.iterdir()) and not (work / MARK).is_file():
        held = ", ".join(sorted(p.name for p in work.iterdir())[:5])
        raise RecipesError(f"--work '{work}' holds files scale-bench did not write ({held}): its corpus and outputs "
                           "would replace files there; name a new or empty folder")
    work.mkdir(parents=True, exist_ok=True)
    (work / MARK).write_text("made by ktrain-recipes scale-bench: it writes corpus.txt and scored*.csv here\n")
    return work


def _run(args: list[str]) -> dict:
    run = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RecipesError(f"scale-bench step failed: {run.stderr.strip().splitlines()[-1] if run.stderr else ''}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def run_scale_bench(predictor: str, data: str | None, texts: int = 1_000_000, in_memory: int = 100_000,
                    ray_texts: int = 100_000, work: str = "runs/scale", out: str = "docs") -> dict:
    """Measure (a), (b) and (c) above; write docs/scale_bench.json and print the table."""
    from ktrain_recipes.data.loading import load_emotion

    from ktrain_recipes_tools.inference.output import check_output_file, write_text_file

    work_dir = work_folder(work)
    Path(out).mkdir(parents=True, exist_ok=True)
    report = check_output_file(Path(out) / "scale_bench.json", flag="--out")  # never into a predictor folder
    source = load_emotion(data)
    lines = [t.replace("\n", " ") for t in source.texts("train") + source.texts("validation")]
    corpus = write_corpus(lines, texts, work_dir / "corpus.txt")
    rows = {}
    rows["a_in_memory_int8"] = _run(["-c", IN_MEMORY, predictor, str(corpus), str(min(in_memory, texts))])
    rows["b_streaming_int8"] = _run(["-c", STREAMING, predictor, str(corpus), str(work_dir / "scored.csv")])
    if ray_texts:
        small = write_corpus(lines, min(ray_texts, texts), work_dir / "corpus-ray.txt")
        rows["c_ray_local"] = _run(["-c", RAY, predictor, str(small), str(work_dir / "scored-ray.csv"), "2"])
    for row in rows.values():
        row["texts_per_s"] = round(row["texts"] / row["seconds"], 1)
        row["peak_rss_mb"] = round(row["peak_rss_mb"], 1)
        row["seconds"] = round(row["seconds"], 1)
    result = {"predictor": predictor, "rows": rows,
              "streaming_vs_in_memory": round(rows["b_streaming_int8"]["texts_per_s"]
                                              / rows["a_in_memory_int8"]["texts_per_s"], 3)}
    write_text_file(report, json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result
