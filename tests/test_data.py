import pandas as pd
import pytest

from ktrain_recipes import EMOTION_LABELS, RecipesError, load_emotion, sample
from ktrain_recipes.data import load_hub, read_texts


def write(folder, name, text):
    (folder / name).write_text(text)
    return folder


def test_real_emotion_folder(emotion):
    assert emotion.label_names == EMOTION_LABELS  # the hub's id order, not alphabetical
    assert len(emotion.texts("train")) == 16000 and len(emotion.texts("validation")) == 2000
    assert emotion.labels("train")[:2] == ["sadness", "sadness"]
    assert emotion.labels("train").count("surprise") == 572


def test_env_var_used_when_no_folder_given(emotion_dir, monkeypatch):
    monkeypatch.setenv("EMOTION_DATA", str(emotion_dir))
    assert load_emotion().source == str(emotion_dir)


def test_txt_with_semicolons_in_text_and_test_split(tmp_path):
    write(tmp_path, "train.txt", "a;b joy;joy\ni am sad;sadness\n\n")
    write(tmp_path, "test.txt", "wow;surprise\n")
    ds = load_emotion(tmp_path)
    assert ds.texts("train") == ["a;b joy", "i am sad"] and ds.labels("train") == ["joy", "sadness"]
    assert ds.labels("test") == ["surprise"]
    with pytest.raises(RecipesError, match="split 'validation' is not in"):
        ds.texts("validation")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_csv_and_parquet_with_names_or_ids(tmp_path, fmt):
    frame = pd.DataFrame({"text": ["so happy", "NA", "scared"], "label": [1, 0, 4]})
    frame.to_csv(tmp_path / "train.csv", index=False) if fmt == "csv" else frame.to_parquet(tmp_path / "train.parquet")
    named = frame.assign(label=["joy", "sadness", "fear"])
    named.to_csv(tmp_path / "validation.csv", index=False) if fmt == "csv" else named.to_parquet(
        tmp_path / "validation.parquet")
    ds = load_emotion(tmp_path)
    assert ds.labels("train") == ["joy", "sadness", "fear"] == ds.labels("validation")
    assert ds.texts("train")[1] == "NA"  # not turned into a missing value


def test_other_label_sets_keep_first_appearance_order(tmp_path):
    write(tmp_path, "train.txt", "x;pos\ny;neg\nz;pos\n")
    assert load_emotion(tmp_path).label_names == ["pos", "neg"]


@pytest.mark.parametrize("content, message", [
    ("fine;joy\nno label here\n", r"train.txt:2: expected `text;label`"),
    ("fine;joy\nempty label;\n", r"train.txt:2: expected `text;label`"),
    ("fine;joy\nodd;happiness\n", r"train.txt:2: unknown label 'happiness'"),
])
def test_malformed_txt_names_file_and_line(tmp_path, content, message):
    write(tmp_path, "train.txt", content)
    with pytest.raises(RecipesError, match=message):
        load_emotion(tmp_path)


def test_unknown_label_in_validation(tmp_path):
    write(tmp_path, "train.txt", "a;joy\n")
    write(tmp_path, "val.txt", "b;joy\nc;bored\n")
    with pytest.raises(RecipesError, match=r"val.txt:2: unknown label 'bored'"):
        load_emotion(tmp_path)


def test_wrong_csv_columns(tmp_path):
    write(tmp_path, "train.csv", "sentence,emotion\nhi,joy\n")
    with pytest.raises(RecipesError, match="missing column.*label, text.*rename"):
        load_emotion(tmp_path)


def test_missing_and_empty_folders(tmp_path):
    with pytest.raises(RecipesError, match="does not exist: pass --data"):
        load_emotion(tmp_path / "nope")
    with pytest.raises(RecipesError, match="no train/val/test"):
        load_emotion(tmp_path)
    write(tmp_path, "train.txt", "\n\n")
    with pytest.raises(RecipesError, match="empty"):
        load_emotion(tmp_path)


def test_unreachable_hub_says_what_to_do(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(RecipesError, match="cannot reach the Hugging Face hub.*--data DIR"):
        load_hub()


def test_sample_is_stratified_and_reproducible(emotion):
    texts, labels = sample(emotion.texts("train"), emotion.labels("train"), 320, seed=5)
    assert len(texts) == 320 and abs(labels.count("surprise") - 320 * 572 / 16000) <= 1
    assert sample(emotion.texts("train"), emotion.labels("train"), 320, seed=5) == (texts, labels)
    assert sample(["a", "b"], ["x", "y"], None) == (["a", "b"], ["x", "y"])


def test_read_texts(tmp_path):
    write(tmp_path, "in.txt", "first one\n\nsecond; with semicolon\n")
    assert list(read_texts(tmp_path / "in.txt")["text"]) == ["first one", "second; with semicolon"]
    write(tmp_path, "in.csv", 'id,text\n1,"hello, world"\n')
    assert read_texts(tmp_path / "in.csv").to_dict("list") == {"id": ["1"], "text": ["hello, world"]}
    write(tmp_path, "UPPER.CSV", "text\nhello\n")  # the header is a header, whatever the suffix's case
    assert list(read_texts(tmp_path / "UPPER.CSV")["text"]) == ["hello"]
    write(tmp_path, "bad.csv", "id,body\n1,x\n")
    with pytest.raises(RecipesError, match="no 'text' column"):
        read_texts(tmp_path / "bad.csv")


def test_binary_or_wrongly_encoded_input_is_refused_naming_the_byte(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"fine line\n\xff\xfe\x00garbage")
    with pytest.raises(RecipesError, match="byte 10 is not valid utf-8.*--encoding"):
        read_texts(tmp_path / "bin.txt")
    (tmp_path / "latin.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    assert list(read_texts(tmp_path / "latin.txt", encoding="latin-1")["text"]) == ["caf\xe9 au lait"]
    with pytest.raises(RecipesError, match="is a folder"):
        read_texts(tmp_path)


def test_two_files_for_one_split_are_refused(tmp_path):
    write(tmp_path, "train.txt", "a;joy\n")
    write(tmp_path, "train.csv", "text,label\na,joy\n")
    with pytest.raises(RecipesError, match="train.txt and train.csv for the train split"):
        load_emotion(tmp_path)


def test_training_labels_missing_a_class_are_refused_before_the_model_loads(emotion):
    with pytest.raises(RecipesError, match="no example of love, surprise"):
        emotion.check_trainable(["joy", "sadness", "anger", "fear"])
    emotion.check_trainable(list(emotion.label_names))
