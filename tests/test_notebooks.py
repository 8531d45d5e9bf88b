"""The committed notebooks match their source (the .py beside each) and carry no machine paths; nbval runs them
(make test)."""

import importlib.util
import inspect
import json
import os
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
spec = importlib.util.spec_from_file_location("sync", NOTEBOOKS / "sync.py")
sync = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sync)
EXPECTED = {source.with_suffix(".ipynb").name: sync.cells(sync.read_source(source)[0]) for source in sync.sources()}


KERAS3_NOTEBOOKS = ["10_keras3_keras_hub.ipynb"]


def test_every_notebook_is_committed_with_its_source():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED)
    assert len(EXPECTED) == 13


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_matches_its_source(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert sync.cells(nb) == EXPECTED[name], f"{name} is stale: run make notebooks"
    assert sync.read_source(NOTEBOOKS / name.replace(".ipynb", ".py"))[1] is False, (
        f"{name}: its install cell differs from notebooks/shared/install_cell.py: run make notebooks")
    # the Keras 3 notebook installs nothing Colab has: its own cell only puts this project on the path
    assert sum(sync.is_install(src) for _, src in EXPECTED[name]) == (0 if name in KERAS3_NOTEBOOKS else 1)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_outputs_hold_no_machine_paths(name):
    text = json.dumps([c.get("outputs", []) for c in nbformat.read(NOTEBOOKS / name, as_version=4).cells])
    for marker in ["/work/", "/root/", "/home/", "/tmp/"]:
        assert marker not in text, f"{name} output mentions {marker}: re-run or strip outputs"


MODEL_NOTEBOOKS = ["02_base_size_emotion.ipynb"]  # the base-size lesson: the template with a model switch
STEP_BY_STEP = [*MODEL_NOTEBOOKS, "01_minilm_step_by_step.ipynb"]  # every ktrain call in the open
KTRAIN_CALLS = ["text.Transformer(", "t.preprocess_train(", "t.preprocess_test(", "t.get_classifier()",
                "ktrain.get_learner(", "learner.lr_find(", "learner.lr_plot(suggest=True)",
                "learner.fit_onecycle(config.lr, config.epochs", "learner.validate(class_names=",
                "learner.view_top_losses(", "ktrain.get_predictor(", "predictor.predict(", "predictor.predict_proba(",
                "predictor.save(", "ktrain.load_predictor("]


@pytest.mark.parametrize("name", STEP_BY_STEP)
def test_model_notebooks_call_ktrain_in_the_open(name):
    code = "\n".join(src for kind, src in EXPECTED[name] if kind == "code")
    for call in KTRAIN_CALLS:
        assert call in code, call
    for step in ["setup_notebook", "time_inference", "save_checked_predictor", "load_checked_predictor"]:
        assert step in code, step
    # each figure and table, drawn by the helper (02) or by pandas, scikit-learn and ktrain (01)
    for ours, theirs in [("plot_label_distribution", ".value_counts()"), ("plot_token_lengths", ".plot.hist("),
                         ("plot_history", 'learner.plot("loss")'), ("report_table", 'pd.DataFrame(metrics["report"])'),
                         ("plot_confusion_matrix", "ConfusionMatrixDisplay.from_predictions(")]:
        assert ours in code or theirs in code, (ours, theirs)


TEACHING = {  # each teaching step of the template, as code every step-by-step notebook runs
    "a baseline to beat": "DummyClassifier(strategy=\"most_frequent\")",
    "the tokenizer's pieces": "tokenizer.tokenize(tweet)",
    "the one-cycle schedule": "learner.plot(\"lr\")",
    "the lowest losses": "easiest = np.argsort(loss)[:5]",
    "the test split": "ds.labels(\"test\")",
    "an explanation": "predictor.explain(",
}
@pytest.mark.parametrize("name", STEP_BY_STEP)
def test_step_by_step_notebooks_teach_each_step_and_their_own_model(name):
    code = "\n".join(src for kind, src in EXPECTED[name] if kind == "code")
    prose = "\n".join(src for kind, src in EXPECTED[name] if kind == "md")
    for step, call in TEACHING.items():
        assert call in code, step
    # each model's own paragraphs (its tokenizer, its ideas) are in its notebook, and are its own: no other
    # step-by-step notebook carries them
    import tomllib

    values = tomllib.loads((NOTEBOOKS / "shared" / "step_by_step.toml").read_text())
    stem = name.removesuffix(".ipynb")
    for key in ("tokenizer", "model_ideas"):
        own = values[stem][key].strip()
        assert len(own) > 200 and own.splitlines()[0] in prose, key
        assert all(values[other][key].strip() != own for other in values if other != stem), key


@pytest.mark.parametrize("stem", sync.step_by_step_names())
def test_step_by_step_sources_are_the_template_with_their_values(stem):
    assert (NOTEBOOKS / f"{stem}.py").read_text() == sync.render_step_by_step(stem), (
        f"{stem}.py differs from notebooks/shared/step_by_step.py.in: edit the template or its values, "
        "then make notebooks")


def test_the_template_check_can_fail():
    values = {"title": "T", "intro": "line one\nline two", "code": "x = 1\ny = 2"}
    template = "# # $title\n# $intro\n$code\n# $$1 is kept"
    expected = "# # T\n# line one\n# line two\nx = 1\ny = 2\n# $1 is kept"
    assert sync.render_step_by_step("nb", template, values) == expected
    with pytest.raises(KeyError):
        sync.render_step_by_step("nb", template, {k: v for k, v in values.items() if k != "intro"})
    with pytest.raises(ValueError, match="unused"):
        sync.render_step_by_step("nb", template, {**values, "unused": "nowhere"})
    # a placeholder alone on its line with an empty value drops the line (01 has no line 02 has); blank lines stay
    assert sync.render_step_by_step("nb", "a\n    $extra\n\nb", {"extra": ""}) == "a\n\nb"
    assert sync.render_step_by_step("nb", "a\n    $extra\nb", {"extra": "c = 1"}) == "a\n    c = 1\nb"
    assert set(sync.step_by_step_names()) == {n.removesuffix(".ipynb") for n in STEP_BY_STEP}


def test_the_distillation_notebook_trains_its_student_with_ktrains_calls_in_the_open():
    code = "\n".join(src for kind, src in EXPECTED["09_distill_and_quantize.ipynb"] if kind == "code")
    for call in ["text.Transformer(", "s.preprocess_train(", "krt.teacher_logits_for(teacher.model, t,",
                 "krt.pack_targets(", "loss=krt.distillation_loss(",
                 "ktrain.get_learner(student", "learner.fit_onecycle(config.lr, config.epochs", "ktrain.get_predictor(",
                 "kr.save_checked_predictor(", "krt.distill("]:
        assert call in code, call
    assert code.index("ktrain.get_learner(student") < code.index("krt.distill(")  # the open steps come first


def test_no_helper_shadows_a_ktrain_name():
    import ktrain

    import ktrain_recipes as kr

    ktrain_names = set(dir(ktrain)) | {"lr_find", "lr_plot", "fit_onecycle", "validate", "view_top_losses",
                                       "predict", "predict_proba", "save", "get_classifier", "preprocess_train"}
    public = {n for n in dir(kr) if not n.startswith("_") and not inspect.ismodule(getattr(kr, n))}  # helpers
    assert not public & ktrain_names, public & ktrain_names


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_cell_mentions_ci(name):

    for kind, src in EXPECTED[name]:
        assert not re.search(r"\bCI\b|ci_overrides|smoke", src, re.I), f"{name}: a {kind} cell mentions CI: {src[:80]}"
        # the smoke run's output checks are cell tags (nbval-check-output), out of a learner's view
        assert "NBVAL" not in src, f"{name}: a test marker in a cell: tag the cell nbval-check-output instead"


def test_the_smoke_start_up_file_overrides_a_parameter_cell(tmp_path):
    """tests/notebook_smoke.py in a real IPython shell: after the cell that makes `config`, the overrides apply."""
    from IPython.core.interactiveshell import InteractiveShell

    smoke = tmp_path / "smoke.json"
    smoke.write_text(json.dumps({"models": {"minilm": "tiny-folder"}, "settings": {"limit": 200, "epochs": 1}}))
    shell = InteractiveShell.instance()
    try:
        os.environ["KTRAIN_RECIPES_SMOKE"] = str(smoke)
        shell.run_cell((ROOT / "tests" / "notebook_smoke.py").read_text())
        assert "_install_smoke_overrides" not in shell.user_ns  # leaves no name behind
        shell.run_cell("import ktrain_recipes as kr\nimport ktrain_recipes_tools as krt\n"
                       "config = kr.RecipeConfig('minilm', epochs=3)\n"
                       "teacher_config = kr.RecipeConfig('mpnet', epochs=3)\n"
                       "settings = krt.DistillSettings(teacher='runs/t', student='minilm', layers=6)\n"
                       "MODELS = {'ours': 'minilm', 'theirs': 'org/model'}")
        config = shell.user_ns["config"]
        assert (config.model, config.epochs, config.limit) == ("tiny-folder", 1, 200)
        teacher = shell.user_ns["teacher_config"]
        assert (teacher.model, teacher.epochs) == ("mpnet", 1)  # no stand-in named for mpnet here: kept
        assert shell.user_ns["settings"].student == "tiny-folder"
        assert shell.user_ns["MODELS"] == {"ours": "tiny-folder", "theirs": "org/model"}
    finally:
        os.environ.pop("KTRAIN_RECIPES_SMOKE", None)
        InteractiveShell.clear_instance()


def copy_notebooks(tmp_path) -> Path:
    import shutil

    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, folder, ignore=shutil.ignore_patterns("runs", "__pycache__", ".ipynb_checkpoints"))
    return folder


def run_sync(folder: Path, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, str(folder / "sync.py"), *args], capture_output=True, text=True,
                          timeout=300)


def test_a_generated_notebook_carries_a_banner_and_a_hand_edit_is_refused(tmp_path):
    for stem in sync.step_by_step_names():
        text = (NOTEBOOKS / f"{stem}.py").read_text()
        assert "Generated by `make notebooks` from notebooks/shared/step_by_step.py.in" in text.split("# ---")[1]
        assert not sync.hand_edited(text)
        assert sync.hand_edited(text.replace("learner.lr_find(", "learner.lr_find(  "))
    folder = copy_notebooks(tmp_path)
    edited = folder / "02_base_size_emotion.py"
    edited.write_text(edited.read_text() + "\n# %%\nprint('my edit')\n")
    (folder / "shared" / "step_by_step.toml").write_text(
        (folder / "shared" / "step_by_step.toml").read_text().replace("epochs=2,", "epochs=1,"))
    before = {p.name: p.read_text() for p in folder.glob("*.py")}
    result = run_sync(folder)
    assert result.returncode == 1
    assert "02_base_size_emotion.py was edited by hand" in result.stderr
    assert "notebooks/shared/step_by_step.py.in" in result.stderr and "step_by_step.toml" in result.stderr
    assert {p.name: p.read_text() for p in folder.glob("*.py")} == before  # nothing written, the edit kept


def test_an_edit_made_in_jupyter_comes_back_to_the_source(tmp_path):
    folder = copy_notebooks(tmp_path)
    result = run_sync(folder, "--from-ipynb")
    assert result.returncode == 0 and "wrote" not in result.stdout  # unchanged notebooks: nothing to write
    path = folder / "07_reuse_predictor.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code" and "PREDICTOR =" in c.source)
    code.source += "\nprint('edited in Jupyter')"
    nbformat.write(nb, path)
    result = run_sync(folder, "--from-ipynb", "07_reuse_predictor")
    assert result.returncode == 0, result.stderr
    assert "print('edited in Jupyter')" in (folder / "07_reuse_predictor.py").read_text()
    generated = folder / "01_minilm_step_by_step.ipynb"
    nb = nbformat.read(generated, as_version=4)
    nb.cells[-1].source += "\n# edited"
    nbformat.write(nb, generated)
    result = run_sync(folder, "--from-ipynb", "01_minilm_step_by_step")
    assert result.returncode == 1 and "step_by_step.py.in" in result.stderr


def edit_in_jupyter(path: Path, line: str) -> None:
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if c.cell_type == "code" and not sync.is_install(c.source)).source += "\n" + line
    nbformat.write(nb, path)


def test_make_notebooks_refuses_to_lose_an_edit_made_in_jupyter(tmp_path):
    folder = copy_notebooks(tmp_path)
    assert all(nbformat.read(p, as_version=4).metadata["ktrain_recipes"]["written_cells_sha256"]
               for p in folder.glob("*.ipynb"))  # every committed notebook carries the record
    for name in ("00_quickstart", "07_reuse_predictor"):
        edit_in_jupyter(folder / f"{name}.ipynb", "print('my edit')")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    result = run_sync(folder)
    assert result.returncode == 1
    assert "00_quickstart.ipynb, 07_reuse_predictor.ipynb changed in Jupyter" in result.stderr
    assert "make notebooks-from-ipynb" in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before  # nothing written
    result = run_sync(folder, "--from-ipynb")  # the edits come back to the sources ...
    assert result.returncode == 0, result.stderr
    assert run_sync(folder).returncode == 0  # ... and then the notebooks rebuild, the edits kept
    assert "print('my edit')" in (folder / "07_reuse_predictor.ipynb").read_text()


def test_bringing_edits_back_refuses_a_generated_notebook_before_writing_any(tmp_path):
    folder = copy_notebooks(tmp_path)
    for name in ("00_quickstart", "02_base_size_emotion", "06_compare_models"):
        edit_in_jupyter(folder / f"{name}.ipynb", "print('my edit')")
    before = {p.name: p.read_bytes() for p in folder.glob("*.py")}
    result = run_sync(folder, "--from-ipynb")
    assert result.returncode == 1
    assert "notebooks/02_base_size_emotion.ipynb edited, and generated" in result.stderr
    assert "edited too: 00_quickstart, 02_base_size_emotion, 06_compare_models" in result.stderr
    assert {p.name: p.read_bytes() for p in folder.glob("*.py")} == before


def edit_source(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_edit_on_both_sides_is_a_conflict_that_neither_direction_resolves_alone(tmp_path):
    """Edited in Jupyter and in its .py since make notebooks wrote it: rebuilding would drop the notebook's edit and
    bringing the notebook back would drop the source's; both refuse, name the cells, and write nothing."""
    folder = copy_notebooks(tmp_path)
    edit_in_jupyter(folder / "07_reuse_predictor.ipynb", "print('edited in Jupyter')")
    edit_source(folder / "07_reuse_predictor.py", "# %%\n", "# %%\nprint('edited in the source')\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    for args in ((), ("--from-ipynb",)):
        result = run_sync(folder, *args)
        assert result.returncode == 1, args
        assert "07_reuse_predictor.ipynb (cells " in result.stderr and "edited both in Jupyter and in its source" \
            in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_a_notebook_whose_record_was_stripped_is_not_taken_as_unedited(tmp_path):
    folder = copy_notebooks(tmp_path)
    path = folder / "07_reuse_predictor.ipynb"
    edit_in_jupyter(path, "print('my edit')")
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("ktrain_recipes")  # as nbstripout and some editors leave it
    nbformat.write(nb, path)
    before = path.read_bytes()
    result = run_sync(folder)
    assert result.returncode == 1 and "07_reuse_predictor.ipynb changed in Jupyter" in result.stderr
    assert path.read_bytes() == before


def test_execute_refuses_a_notebook_that_differs_from_its_source(tmp_path):
    import subprocess
    import sys

    folder = copy_notebooks(tmp_path)
    path = folder / "07_reuse_predictor.ipynb"
    edit_in_jupyter(path, "print('my edit')")
    before = path.read_bytes()
    env = {k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")}
    run = subprocess.run([sys.executable, str(folder / "execute.py"), str(path)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 1 and "differs from its source 07_reuse_predictor.py (cells" in run.stderr
    assert path.read_bytes() == before  # nothing ran, nothing recorded


def test_sync_and_execute_refuse_what_they_cannot_read_in_one_line(tmp_path):
    import subprocess
    import sys

    folder = copy_notebooks(tmp_path)
    for args, says in [(("09_nowhere",), "no notebook here is called 09_nowhere"),
                       (("--from-ipynb", "nowhere"), "no notebook here is called nowhere")]:
        result = run_sync(folder, *args)
        assert result.returncode == 1 and says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    source = folder / "07_reuse_predictor.py"
    good = source.read_bytes()
    for broken, says in [(b"# ---\n# jupyter:\n#   kernelspec: [unclosed\n# ---\n\n" + good, "cannot read"),
                         (good + "\n# caf\xe9\n".encode("latin-1"), "not UTF-8 text")]:
        source.write_bytes(broken)
        result = run_sync(folder, "07_reuse_predictor")
        assert result.returncode == 1 and says in result.stderr and "Traceback" not in result.stderr, result.stderr
    source.write_bytes(good)
    notebook = folder / "07_reuse_predictor.ipynb"
    notebook.write_text('{"not": "a notebook"}')
    result = run_sync(folder, "07_reuse_predictor")
    assert result.returncode == 1 and "cannot read" in result.stderr and "Traceback" not in result.stderr
    assert notebook.read_text() == '{"not": "a notebook"}'
    env = {k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")}
    for target, says in [(tmp_path / "missing.ipynb", "is not a file"), (notebook, "cannot read")]:
        run = subprocess.run([sys.executable, str(folder / "execute.py"), str(target)], capture_output=True,
                             text=True, timeout=300, env=env)
        assert run.returncode == 1 and says in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_execute_cleans_its_own_outputs(tmp_path):
    import subprocess
    import sys

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys\nprint('10%\\r50%\\r100%')\nprint('start-up chatter', file=sys.stderr)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    env = {k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")}
    subprocess.run([sys.executable, str(NOTEBOOKS / "execute.py"), str(path)], check=True, timeout=300, env=env)
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert [(o.name, o.text) for o in outputs] == [("stdout", "100%\n")]


def test_execute_until_runs_the_cells_before_a_marker_and_leaves_the_rest_without_outputs(tmp_path):
    import subprocess
    import sys

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('data')"),
                                         nbformat.v4.new_markdown_cell("the weights"),
                                         nbformat.v4.new_code_cell("print('weights')  # needs_weights()"),
                                         nbformat.v4.new_code_cell("print('after')")])
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="stale\n")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    env = {k: v for k, v in os.environ.items() if k not in ("KTRAIN_RECIPES_SMOKE", "IPYTHONDIR")}
    run = [sys.executable, str(NOTEBOOKS / "execute.py"), str(path), "--until"]
    subprocess.run([*run, "needs_weights("], check=True, timeout=300, env=env)
    cells = nbformat.read(path, as_version=4).cells
    assert [o.text for o in cells[0].outputs] == ["data\n"]
    assert cells[2].outputs == [] and cells[3].outputs == []
    missing = subprocess.run([*run, "nowhere("], capture_output=True, text=True, timeout=300, env=env)
    assert missing.returncode == 1 and "no code cell" in missing.stderr


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_committed_outputs_are_real_and_come_from_the_current_cells(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    has_outputs = any(c.get("outputs") for c in nb.cells if c.cell_type == "code")
    if has_outputs:
        assert sync.executed_digest(nb) == sync.sources_digest(EXPECTED[name]), (
            f"{name}: its outputs were made from other cells; re-run notebooks/execute.py or strip them")
        text = json.dumps([c.get("outputs", []) for c in nb.cells])
        assert "CI smoke run" not in text and "tiny-" not in text, f"{name}: outputs of a smoke run"


def shown_share(nb) -> float:
    """The share of a notebook's lesson code cells (all but the install cell and the solutions) with outputs."""
    code = [c for c in nb.cells if c.cell_type == "code" and "install" not in c.metadata.get("tags", [])
            and not sync.is_solution(c.source)]  # the exercises' solutions are the learner's to run
    return sum(bool(c.get("outputs")) for c in code) / len(code)


@pytest.mark.parametrize("name", ["02_base_size_emotion.ipynb", "03_four_architectures.ipynb"])
def test_the_seed_lesson_shows_every_step_of_a_real_run(name):
    """The four-model lesson (02-03): at least 80% of the visible code cells carry the outputs of a real run, and
    the base-size lesson's run is of a base-size model."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert shown_share(nb) >= 0.8, f"{name}: {shown_share(nb):.0%} of its code cells show outputs; run it whole"
    if name in MODEL_NOTEBOOKS:
        text = json.dumps([c.get("outputs", []) for c in nb.cells])
        # a base-size model trained: its parameter count (110M for MPNet-base and BERT-base) is an output
        assert re.search(r"1[01]\d,\d{3},\d{3} parameters", text), f"{name}: no base-size model in its outputs"


def test_the_stale_output_check_can_fail(tmp_path):
    cells = EXPECTED["00_quickstart.ipynb"]
    nb = sync.build(NOTEBOOKS / "00_quickstart.py")
    nb.metadata["ktrain_recipes"] = {"executed_sources_sha256": sync.sources_digest(cells)}
    assert sync.executed_digest(nb) == sync.sources_digest(cells)
    last = max(i for i, (kind, text) in enumerate(cells) if kind == "code" and not sync.is_solution(text))
    changed = [*cells[:last], ("code", cells[last][1] + "\nprint('edited')"), *cells[last + 1:]]
    assert sync.executed_digest(nb) != sync.sources_digest(changed)
    commented = [*cells[:last], ("code", "# a note\n" + cells[last][1] + "  # edited\n\n"), *cells[last + 1:]]
    assert sync.executed_digest(nb) == sync.sources_digest(commented)  # comments run nothing
    prose = [("md", text + " (mended)") if kind == "md" else (kind, text) for kind, text in cells]
    assert sync.executed_digest(nb) == sync.sources_digest(prose)  # prose cells make no outputs


def test_a_stale_notebook_loses_its_outputs_when_rebuilt(tmp_path):
    import shutil

    for suffix in (".py", ".ipynb"):
        shutil.copy(NOTEBOOKS / f"00_quickstart{suffix}", tmp_path / f"00_quickstart{suffix}")
    assert any(c.get("outputs") for c in sync.build(tmp_path / "00_quickstart.py").cells)  # fresh: kept
    text = (tmp_path / "00_quickstart.py").read_text()
    (tmp_path / "00_quickstart.py").write_text(text.replace("kr.setup_notebook()", "kr.setup_notebook()  # why"))
    assert any(c.get("outputs") for c in sync.build(tmp_path / "00_quickstart.py").cells)  # a comment: kept
    (tmp_path / "00_quickstart.py").write_text(text.replace("kr.setup_notebook()", "kr.setup_notebook(); 1"))
    assert not any(c.get("outputs") for c in sync.build(tmp_path / "00_quickstart.py").cells)


class _Run:
    """Records the install cell's subprocess calls; answers the version check with ``versions``."""

    def __init__(self, versions):
        self.calls, self.versions = [], versions

    def __call__(self, cmd, **kwargs):
        import subprocess

        self.calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout=json.dumps(self.versions), stderr="")


@pytest.mark.parametrize("cloned, new_numpy, restarts", [(False, "9.9.9", True), (True, "9.9.9", True),
                                                         (True, None, False)])
def test_install_cell_uses_this_kernels_pip_restarts_when_needed_and_can_run_again(monkeypatch, tmp_path, cloned,
                                                                                   new_numpy, restarts):
    import importlib.util
    import os
    import shutil
    import subprocess
    import sys
    import time

    import numpy

    (tmp_path / "ktrain-recipes").mkdir()  # the clone, as the (mocked) git would leave it
    for name in ("requirements.txt", "requirements-serve.txt", "constraints.txt", "notebooks/shared/install.py"):
        (tmp_path / "ktrain-recipes" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / "ktrain-recipes" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "sleep", lambda s: None)

    versions = {"numpy": new_numpy or numpy.__version__}
    for name in ("matplotlib", "pandas"):
        if name in sys.modules:
            versions[name] = sys.modules[name].__version__
    run, killed = _Run(versions), []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(os.path, "isdir", lambda path: cloned)
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append(sig))
    monkeypatch.setattr(sys, "path", list(sys.path))
    exec(sync.INSTALL, {})
    assert any(c[:2] == ["git", "clone"] for c in run.calls) == (not cloned)  # a second run does not clone again
    pip_calls = [c for c in run.calls if "pip" in c]
    assert pip_calls and all(c[0] == sys.executable for c in pip_calls)
    assert any("constraints.txt" in " ".join(c) for c in pip_calls)
    assert not any("requirements-serve" in " ".join(c) for c in pip_calls)  # a notebook that serves nothing
    assert bool(killed) == restarts
    # the runtime's numpy (loaded here) is kept: its pin is left out of what pip is given
    for name in ("requirements.txt", "constraints.txt"):
        given = (tmp_path / "ktrain-recipes" / f".notebook-{name}").read_text().splitlines()
        assert not any(line.startswith("numpy==") for line in given) and len(given) > 10


def test_an_install_cell_with_the_serve_extra_installs_the_services_pins_too(monkeypatch, tmp_path):
    import importlib.util
    import os
    import shutil
    import subprocess
    import sys

    import numpy

    for name in ("requirements.txt", "requirements-serve.txt", "constraints.txt", "notebooks/shared/install.py"):
        (tmp_path / "ktrain-recipes" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / "ktrain-recipes" / name)
    monkeypatch.chdir(tmp_path)
    run = _Run({"numpy": numpy.__version__, **{m: sys.modules[m].__version__ for m in ("matplotlib", "pandas")
                                               if m in sys.modules}})
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(os.path, "isdir", lambda path: True)
    monkeypatch.setattr(sys, "path", list(sys.path))
    exec(sync.install_cell(["install", "extra-serve"]), {})
    pins = next(c for c in run.calls if "pip" in c and "-r" in c)
    given = [pins[i + 1] for i, arg in enumerate(pins) if arg == "-r"]
    assert given == ["ktrain-recipes/.notebook-requirements.txt", "ktrain-recipes/.notebook-requirements-serve.txt"]
    serve = (tmp_path / "ktrain-recipes" / ".notebook-requirements-serve.txt").read_text()
    assert "fastapi==" in serve and "uvicorn==" in serve
    assert "fastapi" not in (ROOT / "requirements.txt").read_text()  # the helper's stack leaves the service out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_notebook_installs_the_services_packages_only_when_it_serves(name):
    code = [src for kind, src in EXPECTED[name] if kind == "code"]
    install = next((src for src in code if sync.is_install(src)), None)
    if install is None:  # the Keras 3 notebook installs nothing
        return
    serves = any(re.search(r'"ktrain_recipes", "serve"|ktrain-recipes serve', src) for src in code)
    assert ('EXTRAS = ["serve"]' in install) == serves, name


def test_model_notebooks_open_on_a_gpu_runtime():
    for name in MODEL_NOTEBOOKS:
        assert nbformat.read(NOTEBOOKS / name, as_version=4).metadata["accelerator"] == "GPU"


@pytest.mark.parametrize("name", MODEL_NOTEBOOKS + ["01_minilm_step_by_step.ipynb"])
def test_model_notebooks_take_their_settings_from_the_registry(name):

    from ktrain_recipes.models import get_spec

    params = next(src for kind, src in EXPECTED[name] if kind == "code" and "kr.RecipeConfig(" in src)
    model = re.search(r'model="([^"]+)"', params).group(1)
    spec = get_spec(model)
    assert spec.name != "custom", f"{name}: {model} is not in the registry"
    assert f"batch_size={spec.batch_size}," in params
    assert re.search(r"lr=([0-9.e-]+)", params) and float(re.search(r"lr=([0-9.e-]+)", params).group(1)) == spec.lr


def test_08_trains_at_the_rate_validation_chose_on_most_tasks(ethics_table):
    # docs/ethics holds the paper-budget runs; per task, the rate docs/results.md's table says validation chose
    from collections import Counter
    votes = Counter()
    for task in ethics_table.TASKS:
        runs = ethics_table.load_runs(ROOT / "docs" / "ethics", task)
        assert len(runs) == 2, f"{task}: both rates of the series should be in docs/ethics"
        run, _ = ethics_table.validation_choice(runs, task)
        votes[run["settings"]["lr"]] += 1
    rate, count = votes.most_common(1)[0]
    assert count >= 3
    params = next(src for kind, src in EXPECTED["08_ethics_benchmark.ipynb"]
                  if kind == "code" and "kr.RecipeConfig(" in src)
    assert float(re.search(r"lr=([0-9.e-]+)", params).group(1)) == rate
    assert "epochs=4," in params and "batch_size=16," in params and "weight_decay=0.01," in params


def test_09_reads_its_timings_as_medians_of_rounds_in_turn():
    code = "\n".join(src for kind, src in EXPECTED["09_distill_and_quantize.ipynb"] if kind == "code")
    prose = "\n".join(src for kind, src in EXPECTED["09_distill_and_quantize.ipynb"] if kind == "md")
    assert "krt.side_by_side(models, val, ds.label_names, rounds=3)" in code and "medians" in prose


def test_runs_go_to_google_drive_on_colab_and_stay_local_elsewhere(monkeypatch, capsys):
    import sys
    import types

    from ktrain_recipes.notebook import runs_folder

    assert runs_folder() == "runs"  # not on Colab: google.colab cannot be imported
    mounted = []
    colab = types.ModuleType("google.colab")
    colab.drive = types.SimpleNamespace(mount=mounted.append)
    google = types.ModuleType("google")
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    assert runs_folder() == "/content/drive/MyDrive/ktrain-recipes/runs"
    assert mounted == ["/content/drive"]
    assert "other notebooks find this one's predictor" in capsys.readouterr().err
    assert runs_folder("runs", google_drive=False) == "runs" and mounted == ["/content/drive"]


@pytest.mark.parametrize("name", ["07_reuse_predictor.ipynb", "09_distill_and_quantize.ipynb"])
def test_a_notebook_without_a_predictor_says_so_before_training_one(name):
    code = "\n".join(src for kind, src in EXPECTED[name] if kind == "code")
    fallback = code[code.index("if not Path("):]
    assert fallback.index("print(f\"No ") < fallback.index("kr.run_recipe(")


def test_a_notebook_kernel_imports_tensorflow_without_its_start_up_lines(tmp_path):
    """In a kernel (ipykernel loaded), `import ktrain_recipes` imports TensorFlow with fd 2 silenced, so absl's,
    oneDNN's and cudart's C++ lines never reach a cell; elsewhere the import stays light (no TensorFlow)."""
    import subprocess
    import sys

    probe = ("import sys, types\n{fake}import ktrain_recipes\nprint('tensorflow' in sys.modules)\n"
             "import ktrain\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "0"}
    kernel = subprocess.run([sys.executable, "-c", probe.format(fake="sys.modules['ipykernel'] = "
                                                                     "types.ModuleType('ipykernel')\n")],
                            capture_output=True, text=True, timeout=300, env=env)
    assert kernel.returncode == 0, kernel.stderr
    assert kernel.stdout.strip() == "True"
    for line in ("absl::InitializeLog", "oneDNN custom operations", "cuda"):
        assert line not in kernel.stderr, kernel.stderr
    plain = subprocess.run([sys.executable, "-c", "import sys, ktrain_recipes; print('tensorflow' in sys.modules)"],
                           capture_output=True, text=True, timeout=300, env=env)
    assert plain.stdout.strip() == "False"


def test_the_top_losses_cell_prints_the_texts_in_the_committed_run():

    nb = nbformat.read(NOTEBOOKS / "01_minilm_step_by_step.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "learner.top_losses(n=5" in c.source)
    text = "".join(o.get("text", "") for o in cell.outputs)
    lines = re.findall(r"^loss \d+\.\d\d  true (\w+), predicted (\w+): (.+)$", text, re.M)
    assert len(lines) == 5, text
    assert all(truth != guess and len(words.split()) >= 3 for truth, guess, words in lines)


def prose_figures_not_in(nb, results: str) -> list[str]:
    """Figures a notebook's prose states (numbers with a decimal part, and seconds) that neither its own outputs
    (as written, rounded, or as a percentage) nor docs/results.md hold."""
    outs = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain") or ""
            outs.append("".join(text) if isinstance(text, list) else text)
    out_text = "\n".join(outs)
    numbers = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", out_text)]
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        prose = re.sub(r"`[^`]*`", "", re.sub(r"\]\([^)]*\)", "]", cell.source))  # not links, not code
        for figure in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])|(?<![\w.])\d[\d,]*(?= s\b)", prose):
            figure = figure.replace(",", "")
            value, places = float(figure), len(figure.partition(".")[2])
            if figure in out_text or figure in results.replace(",", ""):  # 8,568 s in results.md
                continue
            if not any(round(n, places) == value or round(100 * n, places) == value for n in numbers):
                missing.append(figure)
    return missing


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_figures_in_a_notebooks_prose_are_its_outputs_or_our_results(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if not any(cell.get("outputs") for cell in nb.cells):
        pytest.skip(f"{name} is committed without outputs: its prose quotes none")
    assert prose_figures_not_in(nb, (ROOT / "docs" / "results.md").read_text()) == []


def test_the_prose_figure_check_sees_a_figure_nowhere_in_the_outputs():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("accuracy 0.9371 in 700 s, 70.7% of rows ([see](v1.5.html)); `lr=0.5`"),
        nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", text="0.93712 0.707 699.6\n")])])
    assert prose_figures_not_in(nb, "") == []
    nb.cells[0].source = "accuracy 0.9372 in 705 s"
    assert prose_figures_not_in(nb, "") == ["0.9372", "705"]


# the ktrain objects the notebooks call: the modules, and what text.Transformer (t, and 09's student reader s),
# get_learner and get_predictor (09's teacher too) return
KTRAIN_CALL = re.compile(r"\b(?:ktrain|text|t|s|learner|predictor|teacher|reloaded)\.([A-Za-z_]\w*)\(")


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem[:2])
def test_a_notebook_with_more_kr_helpers_than_ktrain_calls_says_what_each_adds(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    helpers = set(re.findall(r"\b(krt?\.[A-Za-z]\w*)", code))  # the helper's (kr) and the tools' (krt)
    calls = set(KTRAIN_CALL.findall(code))
    if len(helpers) <= len(calls):
        return
    why = next((c.source for c in nb.cells if c.cell_type == "markdown" and "**What `kr`" in c.source), "")
    said = set(re.findall(r"`(krt?\.\w+)`", why[why.find("**What `kr`"):].split("\n\n")[0]))
    unsaid = helpers - said - {"kr.setup_notebook", "kr.runs_folder", "kr.RecipeConfig"}
    assert not unsaid, f"{path.name}: {len(helpers)} kr helpers against {len(calls)} ktrain calls; say what these add"


@pytest.mark.parametrize("name", ["01_minilm_step_by_step.ipynb", "09_distill_and_quantize.ipynb"])
def test_the_step_by_step_notebooks_call_no_more_kr_helpers_than_ktrain_calls(name):
    """Notebooks 01 and 09 teach ktrain: the figures come from pandas, scikit-learn and ktrain's `learner.plot`, the
    scores from scikit-learn, so the helper's names they call are no more than ktrain's. 09's distillation comes from
    the tools by name (`krt.`), which are not the helper's."""
    code = "\n".join(c.source for c in nbformat.read(NOTEBOOKS / name, as_version=4).cells if c.cell_type == "code")
    helpers, calls = set(re.findall(r"\b(kr\.[A-Za-z]\w*)", code)), set(KTRAIN_CALL.findall(code))
    assert len(helpers) <= len(calls), (sorted(helpers), sorted(calls))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_notebook_ends_with_recall_questions_whose_answers_are_hidden(name):
    """The HF course's end-of-chapter quiz: 3 to 5 questions, each with its answer in a closed <details> block, after
    the lesson and before "Next"."""
    cells = [c for c in sync.read_notebook(NOTEBOOKS / name).cells if c.cell_type == "markdown"]
    found = [c.source for c in cells if c.source.startswith("## Check yourself")]
    assert len(found) == 1, f"{name}: no 'Check yourself' cell"
    text = found[0]
    questions = re.findall(r"^\*\*(\d)\.\*\* [^<]+?\?\n\n<details>", text, flags=re.M)
    answers = re.findall(r"<details><summary>Answer</summary>\n\n(.+?)\n\n</details>", text, flags=re.S)
    assert 3 <= len(questions) <= 5 and len(answers) == len(questions), (name, questions, len(answers))
    assert all(len(a.split()) >= 8 for a in answers), f"{name}: an answer too short to check oneself by"
    after = [c.source for c in cells[cells.index(next(c for c in cells if c.source == text)):]]
    assert any("**Next:**" in s for s in after), f"{name}: the questions come before 'Next'"


def test_exercises_have_answers_a_learner_can_open_in_at_least_8_notebooks():
    """An exercise's answer follows its solution, folded (<details>): what the solution finds on the committed run,
    or how to read what it prints. Figures in it are checked like all prose (test_figures_in_a_notebooks_prose_...)."""
    answered = []
    for name in sorted(EXPECTED):
        cells = sync.read_notebook(NOTEBOOKS / name).cells
        answers = [nxt.source for cell, nxt in zip(cells, cells[1:])
                   if cell.cell_type == "code" and sync.is_solution(cell.source) and nxt.cell_type == "markdown"
                   and nxt.source.startswith("<details><summary>")]
        for answer in answers:
            assert answer.rstrip().endswith("</details>"), f"{name}: an answer is not folded whole"
        if answers:
            answered.append(name[:2])
    assert len(answered) >= 8, f"answers in {answered} only"
