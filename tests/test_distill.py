"""Distillation: the layer map, the loss against a hand computation, and a tiny teacher-to-student run."""

import dataclasses
import json

import numpy as np
import pytest

import ktrain_recipes as kr
import ktrain_recipes_tools as krt
from ktrain_recipes.data.loading import EMOTION_LABELS
from ktrain_recipes import RecipesError
from ktrain_recipes_tools import cli
from ktrain_recipes import RecipeConfig
from ktrain_recipes_tools import DistillSettings
from ktrain_recipes_tools.training.distill import distillation_loss
from ktrain_recipes_tools.training.students import cut_layers, encoder_layers, layer_map


def test_layer_map_keeps_every_other_layer():
    assert layer_map(6, 3) == [0, 2, 4] and layer_map(12, 6) == [0, 2, 4, 6, 8, 10] and layer_map(4, 1) == [0]
    with pytest.raises(RecipesError, match="fewer layers than the teacher's 6"):
        layer_map(6, 6)


def test_cut_copies_teacher_layer_2i_into_student_layer_i():
    from transformers import BertConfig, TFAutoModelForSequenceClassification

    config = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                        intermediate_size=32, num_labels=3)
    teacher = TFAutoModelForSequenceClassification.from_config(config)
    teacher(teacher.dummy_inputs)
    student, mapping = cut_layers(teacher, 2)
    assert mapping == [0, 2] and student.config.num_hidden_layers == 2
    for i, j in enumerate(mapping):
        for a, b in zip(encoder_layers(student)[i].get_weights(), encoder_layers(teacher)[j].get_weights()):
            assert np.array_equal(a, b)
    assert not all(np.array_equal(a, b) for a, b in zip(encoder_layers(student)[1].get_weights(),
                                                        encoder_layers(teacher)[1].get_weights()))
    assert np.array_equal(student.layers[-1].get_weights()[0], teacher.layers[-1].get_weights()[0])  # the head


def test_distillation_loss_equals_a_hand_computation():
    labels, teacher, student = np.array([[0.0, 1.0]]), np.array([[1.0, 3.0]]), np.array([[2.0, 0.5]])
    T, alpha = 2.0, 0.3

    def softmax(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    hard = -np.log(softmax(student[0]))[1]
    soft = -(softmax(teacher[0] / T) * np.log(softmax(student[0] / T))).sum()
    expected = alpha * hard + (1 - alpha) * T ** 2 * soft
    y = np.concatenate([labels, teacher], axis=1).astype(np.float32)
    got = float(distillation_loss(2, T, alpha)(y, student.astype(np.float32)).numpy()[0])
    assert got == pytest.approx(expected, rel=1e-5)


@pytest.mark.slow
def test_a_tiny_teacher_distils_into_a_saved_student(tiny_models, small_data, tmp_path):
    teacher = tmp_path / "teacher"
    kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(teacher), epochs=1,
                                  batch_size=16, lr=1e-3))
    out = tmp_path / "student"
    assert cli.main(["distill", "--teacher", str(teacher), "--layers", "1", "--data", str(small_data), "--epochs",
                     "1", "--lr", "1e-3", "--batch-size", "16", "--temperature", "3", "--alpha", "0.4", "--out",
                     str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["distillation"]["layer_map"] == [0] and metrics["distillation"]["temperature"] == 3.0
    # the teacher is recorded as an absolute path, so distilling from this student works from any folder
    assert metrics["distillation"]["teacher"] == str(teacher.resolve())
    assert metrics["settings"]["model"] == str(teacher.resolve())
    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 1
    assert metrics["params"] < json.loads((teacher / "metrics.json").read_text())["params"]
    loaded = kr.load_checked_predictor(out)  # ktrain rebuilds it from the preprocessor's config: the student's
    assert len(encoder_layers(loaded.model)) == 1 and loaded.model.count_params() == metrics["params"]
    assert cli.main(["predict", "--predictor", str(out), "i am happy"]) == 0
    assert cli.main(["export", "--predictor", str(out)]) == 0
    assert cli.main(["predict", "--predictor", str(out), "--int8", "i am happy"]) == 0
    assert cli.main(["distill", "--teacher", str(teacher), "--layers", "1", "--alpha", "2",
                     "--out", str(tmp_path / "x")]) == 1
    # the bench's rows for a student, and its side-by-side timing: tests/test_bench.py


def test_a_student_of_another_tokenizer_reads_with_its_own_and_is_taught_row_for_row(tiny_predictor, tiny_models,
                                                                                      small_data, tmp_path):
    """A BERT teacher, a RoBERTa student (another vocabulary, no segment ids): each text's teacher logits, computed
    on the teacher's reading of it, reach that text in the student's batches."""
    from ktrain_recipes_tools.training.distill import teacher_logits_for

    teacher = kr.load_checked_predictor(tiny_predictor)
    texts = ["i feel fine", "a much longer text about how awful and lonely and sad i feel today", "joy", "so angry"]
    logits = teacher_logits_for(teacher.model, teacher.preproc, texts, [0] * len(texts))
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert np.allclose(probs, teacher.predict(texts, return_proba=True), atol=1e-5)  # in the order of the texts
    out = tmp_path / "student"
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--student", tiny_models["roberta"], "--layers",
                     "2", "--data", str(small_data), "--epochs", "1", "--lr", "1e-3", "--batch-size", "16",
                     "--out", str(out)]) == 0
    student = kr.load_checked_predictor(out)
    from transformers import AutoTokenizer

    assert student.preproc.get_tokenizer().get_vocab() == AutoTokenizer.from_pretrained(
        tiny_models["roberta"]).get_vocab() != teacher.preproc.get_tokenizer().get_vocab()
    assert type(student.model).__name__ == "TFRobertaForSequenceClassification"
    assert len(encoder_layers(student.model)) == 2 and student.preproc.maxlen == teacher.preproc.maxlen
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["distillation"]["layer_map"] == [0, 1] and metrics["settings"]["model"] == tiny_models["roberta"]
    assert json.loads((out / "manifest.json").read_text())["segment_ids"] is False
    assert cli.main(["predict", "--predictor", str(out), "i am happy"]) == 0


@pytest.mark.slow
def test_a_predictor_whose_preprocessor_describes_another_model_is_not_saved(tiny_models, small_data, tmp_path):
    # the teacher's preprocessor with a cut student: ktrain would reload it with the teacher's layer count,
    # the missing layers random; the save refuses and writes nothing
    import ktrain

    teacher = tmp_path / "teacher"
    kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(teacher), epochs=1,
                                  batch_size=16, lr=1e-3))
    loaded = kr.load_checked_predictor(teacher)
    student, _ = cut_layers(loaded.model, 1)
    out = tmp_path / "student"
    with pytest.raises(RecipesError, match="num_hidden_layers"):
        kr.save_checked_predictor(ktrain.get_predictor(student, loaded.preproc), out, {})
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["teacher"]


@pytest.mark.slow
def test_distill_ctrl_c_keeps_its_checkpoint_and_resume_goes_on(tiny_predictor, small_data, tmp_path, monkeypatch,
                                                                capsys):
    from ktrain_recipes.training import train

    from interrupts import ctrl_c_at_epoch

    timer = train.epoch_timer
    ctrl_c_in_second_epoch = ctrl_c_at_epoch(timer, epoch=1)

    out = tmp_path / "student"
    config = RecipeConfig(data=str(small_data), out=str(out), limit=64, eval_limit=32, epochs=2, batch_size=16,
                          lr=1e-3)
    settings = DistillSettings(str(tiny_predictor), layers=1)
    monkeypatch.setattr(train, "epoch_timer", ctrl_c_in_second_epoch)
    interrupted = krt.distill(config, settings)
    assert interrupted["interrupted"] and interrupted["epochs_completed"] == 1
    assert "--resume goes on" in capsys.readouterr().err
    checkpoint = tmp_path / ".student.resume"
    assert (checkpoint / "run.json").exists()  # kept after Ctrl-C, as the message says
    monkeypatch.setattr(train, "epoch_timer", timer)
    with pytest.raises(RecipesError, match="other settings:.*alpha"):
        krt.distill(dataclasses.replace(config, resume=True), dataclasses.replace(settings, alpha=0.9))
    resumed = krt.distill(dataclasses.replace(config, resume=True), settings)
    assert "resuming after 1 of 2 epoch(s)" in capsys.readouterr().err
    assert resumed["epochs_completed"] == 2 and not resumed["interrupted"] and not checkpoint.exists()
    assert resumed["optimizer_steps"] == 2 * 4  # 64 texts in batches of 16, two epochs, none trained twice
    assert kr.load_checked_predictor(out).predict(["i am happy"])[0] in resumed["label_names"]


def test_distill_takes_the_teachers_maxlen_and_refuses_another(tiny_predictor, small_data, tmp_path, capsys):
    config = RecipeConfig(data=str(small_data), out=str(tmp_path / "s"), maxlen=64, epochs=1)
    with pytest.raises(RecipesError, match="takes the teacher's maxlen"):
        krt.distill(config, DistillSettings(str(tiny_predictor)))
    with pytest.raises(SystemExit):  # the CLI has no --maxlen for distill
        cli.main(["distill", "--teacher", str(tiny_predictor), "--out", str(tmp_path / "s"), "--maxlen", "64"])
    assert "unrecognized arguments: --maxlen" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_augmented_copies_are_altered_seeded_and_keep_pairs():
    from ktrain_recipes_tools.training.augment import augment

    texts = ["i feel so happy and relaxed today after the long walk", "this storm makes me nervous and afraid"]
    copies = augment(texts, 5, seed=3)
    assert len(copies) == 10 and copies == augment(texts, 5, seed=3) and copies != augment(texts, 5, seed=4)
    assert all(c != texts[i // 5] for i, c in enumerate(copies[:5]))  # altered (p(unchanged) is tiny here)
    words = {w for t in texts for w in t.split()} | {"[MASK]"}
    assert all(set(c.split()) <= words for c in copies)  # only the corpus's words and the mask
    pairs = augment([("a pair of words here", "and a second text")], 2, seed=0)
    assert len(pairs) == 2 and all(isinstance(p, tuple) and len(p) == 2 for p in pairs)


def test_distill_with_augmented_texts_labels_them_by_the_teacher(tiny_predictor, small_data, tmp_path, monkeypatch):
    import ktrain_recipes.training.recipe as recipe

    seen = {}

    def spy(run, learner, *args, **kwargs):
        data = learner.train_data
        n = len(EMOTION_LABELS)
        seen["n"], seen["rows"] = len(data.y), data.y[-len(data.y) // 3:, :n]  # the last third: altered copies
        return real(run, learner, *args, **kwargs)

    real = recipe.train_and_save
    monkeypatch.setattr(recipe, "train_and_save", spy)
    out = tmp_path / "student"
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--layers", "1", "--data", str(small_data),
                     "--epochs", "1", "--batch-size", "16", "--alpha", "0.5", "--augment", "2", "--limit", "60",
                     "--out", str(out)]) == 0
    assert seen["n"] == 60 * 3  # the training texts and two altered copies of each
    rows = seen["rows"]
    assert np.allclose(rows.sum(axis=1), 1.0) and not np.all(np.isin(rows, [0.0, 1.0]))  # soft, not one-hot
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["distillation"]["augment"] == 2 and metrics["n_train"] == 180
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--alpha", "1", "--augment", "2", "--out",
                     str(tmp_path / "x")]) == 1


def test_a_student_as_deep_as_its_source_is_refused_before_any_copy_is_made(tiny_predictor, tiny_models, small_data,
                                                                             tmp_path, monkeypatch, capsys):
    from ktrain_recipes_tools.training import distill as distilling

    made = []
    monkeypatch.setattr(distilling, "with_copies", lambda *a, **k: made.append(1) or (a[0], a[1]))
    for flags in (["--layers", "2"], ["--layers", "3", "--student", tiny_models["roberta"]]):
        assert cli.main(["distill", "--teacher", str(tiny_predictor), "--data", str(small_data), "--augment", "50",
                         "--out", str(tmp_path / "s"), *flags]) == 1
        assert "the student is cut from a 2-layer model, so it takes fewer layers (1 to 1)" in capsys.readouterr().err
    assert made == [] and not (tmp_path / "s").exists()


def test_a_labels_only_student_never_runs_the_teacher(tiny_predictor, small_data, tmp_path, monkeypatch):
    """alpha 1 ignores the teacher's logits, so they are not computed (a base-size teacher takes minutes for them)."""
    from ktrain_recipes_tools.training import distill as distilling

    def no_teacher(*args, **kwargs):
        raise AssertionError("the teacher was run for a labels-only student")

    monkeypatch.setattr(distilling, "teacher_logits", no_teacher)
    out = tmp_path / "labels"
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--layers", "1", "--alpha", "1", "--data",
                     str(small_data), "--epochs", "1", "--batch-size", "16", "--out", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["distillation"]["alpha"] == 1.0


def test_distill_refuses_what_it_would_ignore_or_crash_on(tiny_predictor, tiny_models, small_data, tmp_path, capsys):
    from ktrain_recipes_tools.training.distill import DistillSettings

    with pytest.raises(SystemExit):  # the student reads with the teacher's maxlen: no flag to ignore
        cli.main(["distill", "--teacher", str(tiny_predictor), "--out", str(tmp_path / "s"), "--maxlen", "9"])
    with pytest.raises(RecipesError, match="--temperature must be a finite number"):
        DistillSettings(str(tiny_predictor), temperature=float("inf")).check()
    capsys.readouterr()
    # 4 training texts cannot hold 6 classes: refused before training, as train refuses it
    assert cli.main(["distill", "--teacher", str(tiny_predictor), "--data", str(small_data), "--limit", "4",
                     "--out", str(tmp_path / "s"), "--epochs", "1"]) == 1
    assert "the training texts have no example of" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


# settings that would silently do the wrong thing are refused where they are written
@pytest.mark.parametrize("call, message", [
    (lambda kr: krt.augment("one text", 2), "takes a list of texts"),
    (lambda kr: krt.augment(["a b c"], -1), "copies must be a whole number"),
    (lambda kr: krt.augment(["a b c"], 2, p_mask=float("nan")), "p_mask must be a chance"),
    (lambda kr: krt.augment(["a b c"], 2, p_mask=5), "p_mask must be a chance"),
    (lambda kr: krt.augment(["a b c"], 2, p_mask=0.6, p_replace=0.6), "at most 1"),
    (lambda kr: krt.augment(["a b c"], 2, window=0), "window must be"),
    (lambda kr: kr.RecipeConfig(labels={"joy", "sadness"}), "must be a list, in the order"),
])
def test_settings_that_would_do_the_wrong_thing_are_refused(call, message):
    import ktrain_recipes as kr

    with pytest.raises(kr.RecipesError, match=message):
        call(kr)


def test_the_precision_asked_is_the_precision_the_student_is_built_in(tiny_predictor, small_data, tmp_path,
                                                                      monkeypatch):
    """distill --precision bfloat16 built its student in float32 and recorded bfloat16; now the student is built
    under the policy asked, and a checkpoint of another precision is not resumed."""
    import tf_keras

    from ktrain_recipes_tools.training import students

    built = []
    real = students.pretrained_classifier

    def spying(*args, **kwargs):
        built.append(tf_keras.mixed_precision.global_policy().name)
        return real(*args, **kwargs)

    monkeypatch.setattr("ktrain_recipes_tools.training.distill.pretrained_classifier", spying)
    out = tmp_path / "bf16"
    config = RecipeConfig(data=str(small_data), out=str(out), limit=64, eval_limit=32, epochs=1, batch_size=16,
                          lr=1e-3, precision="bfloat16", keep_checkpoint=True)
    metrics = krt.distill(config, DistillSettings(str(tiny_predictor), layers=1, alpha=1.0))
    assert built == ["mixed_bfloat16"] and metrics["settings"]["precision"] == "bfloat16"
    assert tf_keras.mixed_precision.global_policy().name == "float32"  # the process is left as it was
    with pytest.raises(RecipesError, match="other settings:.*precision"):
        krt.distill(dataclasses.replace(config, precision="float32", resume=True),
                    DistillSettings(str(tiny_predictor), layers=1, alpha=1.0))
