import json

import pandas as pd
import pytest

from ktrain_recipes import RecipesError, load_emotion, sample
from ktrain_recipes.data.loading import EMOTION_LABELS, Columns, load_data
from ktrain_recipes.inference.prediction import check_texts
from ktrain_recipes.inference.input_files import read_texts
from ktrain_recipes import RecipeConfig
from ktrain_recipes_tools import cli


def write(folder, name, text):
    (folder / name).write_text(text)
    return folder


def test_real_emotion_folder(emotion, emotion_dir):
    lines = {split: (emotion_dir / name).read_text().splitlines() for split, name in
             [("train", "train.txt"), ("validation", "val.txt")]}
    assert emotion.label_names == EMOTION_LABELS  # the hub's id order, not alphabetical
    assert len(emotion.texts("train")) == len(lines["train"]) and \
        len(emotion.texts("validation")) == len(lines["validation"])
    assert emotion.labels("train")[:2] == [line.rsplit(";", 1)[1] for line in lines["train"][:2]]
    assert emotion.labels("train").count("surprise") == sum(line.endswith(";surprise") for line in lines["train"]) > 0


def test_env_var_used_when_no_folder_given(emotion_dir, monkeypatch):
    monkeypatch.setenv("EMOTION_DATA", str(emotion_dir))
    assert load_emotion().source == str(emotion_dir)


def test_txt_with_semicolons_in_text_and_test_split(tmp_path):
    write(tmp_path, "train.txt", "a;b joy;joy\ni am sad;sadness\n\n")
    write(tmp_path, "test.txt", "wow;joy\n")
    ds = load_data(tmp_path, val_fraction=0.5)
    assert sorted(ds.texts("train") + ds.texts("validation")) == ["a;b joy", "i am sad"]
    assert ds.labels("test") == ["joy"] and ds.label_names == ["joy", "sadness"]
    with pytest.raises(RecipesError, match="split 'dev' is not in"):
        ds.texts("dev")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_integer_labels_are_never_another_datasets_names(tmp_path, fmt):
    frame = pd.DataFrame({"text": ["so happy", "NA", "scared"], "label": [1, 0, 4]})
    frame.to_csv(tmp_path / "train.csv", index=False) if fmt == "csv" else frame.to_parquet(tmp_path / "train.parquet")
    frame.to_csv(tmp_path / "validation.csv", index=False) if fmt == "csv" else frame.to_parquet(
        tmp_path / "validation.parquet")
    ds = load_data(tmp_path)
    assert ds.label_names == ["0", "1", "4"] and ds.labels("train") == ["1", "0", "4"] == ds.labels("validation")
    assert ds.texts("train")[1] == "NA"  # not turned into a missing value
    named = load_data(tmp_path, labels=["neg", "pos", "x", "y", "z"])  # --labels: integers are positions in it
    assert named.labels("train") == ["pos", "neg", "z"]


def test_other_label_sets_are_sorted_and_emotion_keeps_its_order(tmp_path, emotion):
    write(tmp_path, "train.txt", "x;pos\ny;neg\nz;pos\n")
    assert load_data(tmp_path / "train.txt", val_fraction=0.34).label_names == ["neg", "pos"]
    write(tmp_path, "train.txt", "x;joy\ny;neutral\nz;joy\n")  # shares a name with emotion; is not emotion
    assert load_data(tmp_path / "train.txt", val_fraction=0.34).label_names == ["joy", "neutral"]
    assert emotion.label_names == EMOTION_LABELS


@pytest.mark.parametrize("content, message", [
    ("fine;joy\nno label here\n", r"train.txt:2: expected `text;label`"),
    ("fine;joy\nempty label;\n", r"train.txt:2: expected `text;label`"),
])
def test_malformed_txt_names_file_and_line(tmp_path, content, message):
    write(tmp_path, "train.txt", content)
    with pytest.raises(RecipesError, match=message):
        load_emotion(tmp_path)


def test_a_validation_label_that_training_lacks_names_file_line_and_label(tmp_path):
    write(tmp_path, "train.txt", "a;joy\nb;anger\n")
    write(tmp_path, "val.txt", "b;joy\nc;bored\n")
    with pytest.raises(RecipesError, match=r"val.txt:2: label 'bored' is not in the training data \(anger, joy\)"):
        load_emotion(tmp_path)


@pytest.mark.parametrize("content, columns, message", [
    ("sentence,emotion\nhi,joy\n", Columns(), r"train.csv: no column 'text' \(columns: sentence, emotion\): "
                                                 "name the right one with --text-column"),
    ("text,label\nhi,joy\nho,\n", Columns(), r"train.csv:3: empty label in column 'label'"),
    ("text,label\nhi,joy\nho,joy\n", Columns(), r"only one label \('joy'\).*at least two"),
    ("a,b,label\nhi,there,1\nho,,0\n", Columns("a", "label", "b"), r"train.csv:3: empty text in column 'b'"),
    ("a,label\nhi,1\n", Columns("a", "label", "b"), r"no column 'b'.*--pair-column"),
])
def test_column_errors_name_file_line_and_fix(tmp_path, content, columns, message):
    write(tmp_path, "train.csv", content)
    with pytest.raises(RecipesError, match=message):
        load_data(tmp_path / "train.csv", columns)


def test_every_empty_text_is_named_in_one_line(tmp_path):
    # a messy file is refused once, naming its empty texts (the first five and how many more), not once per run
    rows = ["good day,joy"] * 12
    for i in (2, 4, 5, 7, 9, 10, 11):
        rows[i] = "  ,joy" if i % 2 else ",sadness"
    write(tmp_path, "train.csv", "\ufefftext,label\r\n" + "\r\n".join(rows) + "\r\n")
    with pytest.raises(RecipesError) as caught:
        load_data(tmp_path / "train.csv", Columns())
    said = str(caught.value)
    assert "\n" not in said and "7 empty texts in column 'text'" in said
    assert "(at lines 4, 6, 7, 9, 11 and 2 more); fill them or remove those rows" in said, said


def test_own_csv_with_other_columns_and_no_validation_file(tmp_path, capsys):
    rows = [f"review {i} {'good' if i % 5 else 'bad'},{i % 5 + 1}" for i in range(100)]
    write(tmp_path, "reviews.csv", "review,stars\n" + "\n".join(rows) + "\n")
    ds = load_data(tmp_path / "reviews.csv", Columns(text="review", label="stars"), seed=3)
    assert ds.label_names == ["1", "2", "3", "4", "5"]
    assert len(ds.texts("train")) == 90 and len(ds.texts("validation")) == 10
    assert sorted(ds.labels("validation")) == ["1", "1", "2", "2", "3", "3", "4", "4", "5", "5"]  # stratified
    assert "held out 10 of 100 training texts" in capsys.readouterr().err
    assert load_data(tmp_path / "reviews.csv", Columns("review", "stars"), seed=3).splits == ds.splits  # seeded


def test_sentence_pairs_and_other_formats(tmp_path):
    frame = pd.DataFrame({"scenario": ["s1", "s2", "s3", "s4"], "excuse": ["e1", "e2", "e3", "e4"],
                          "label": [0, 1, 0, 1]})
    frame.to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    frame.to_csv(tmp_path / "test.tsv", sep="\t", index=False)
    frame.to_csv(tmp_path / "validation.csv", index=False)
    ds = load_data(tmp_path, Columns("scenario", "label", "excuse"))
    assert ds.texts("train")[0] == ("s1", "e1") and ds.texts("test")[3] == ("s4", "e4")
    assert ds.label_names == ["0", "1"] and ds.labels("validation") == ["0", "1", "0", "1"]


def test_missing_and_empty_folders(tmp_path):
    with pytest.raises(RecipesError, match="does not exist: pass --data"):
        load_emotion(tmp_path / "nope")
    with pytest.raises(RecipesError, match="does not exist: pass --data"):
        load_data("reviews.csv")
    with pytest.raises(RecipesError, match="no train/val/test"):
        load_emotion(tmp_path)
    write(tmp_path, "train.txt", "\n\n")
    with pytest.raises(RecipesError, match="empty"):
        load_emotion(tmp_path)


def test_unreachable_hub_says_what_to_do(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(RecipesError, match="cannot reach the Hugging Face hub.*'dair-ai/emotion'.*--data"):
        load_data("dair-ai/emotion")
    with pytest.raises(RecipesError, match="cannot reach the Hugging Face hub.*'hendrycks/ethics'"):
        load_data("hendrycks/ethics", hub_config="justice")


def test_sample_is_stratified_and_reproducible(emotion):
    texts, labels = sample(emotion.texts("train"), emotion.labels("train"), 320, seed=5)
    share = emotion.labels("train").count("surprise") / len(emotion.labels("train"))
    assert len(texts) == 320 and abs(labels.count("surprise") - 320 * share) <= 1
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


def test_a_byte_order_mark_is_dropped_and_a_bad_byte_is_named_by_line_and_offset(tmp_path):
    (tmp_path / "bom.txt").write_bytes("\ufeffhello\nworld\n".encode("utf-8"))
    assert list(read_texts(tmp_path / "bom.txt")["text"]) == ["hello", "world"]
    (tmp_path / "bad.txt").write_bytes(b"one\n\ntwo\nth\xffree\n")  # line 4 starts at byte 9
    with pytest.raises(RecipesError, match=r"line 4, byte 11 is not valid utf-8"):
        read_texts(tmp_path / "bad.txt")


def test_a_utf16_file_is_named_and_its_mark_dropped_when_its_encoding_is_given(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes("\ufeffhello\nworld\n".encode("utf-16-le"))
    with pytest.raises(RecipesError, match="starts with a UTF-16 byte-order mark: give --encoding utf-16"):
        read_texts(path)  # utf-8 by default (latin-1 would read the mark as two letters)
    with pytest.raises(RecipesError, match="UTF-16 byte-order mark"):
        read_texts(path, encoding="latin-1")
    assert list(read_texts(path, encoding="utf-16-le")["text"]) == ["hello", "world"]
    assert list(read_texts(path, encoding="utf-16")["text"]) == ["hello", "world"]


def test_without_the_hub_or_a_folder_the_shipped_slice_is_used_and_said(monkeypatch, capsys):
    import hashlib
    import re

    from ktrain_recipes.data.loading import EMOTION_SLICE

    monkeypatch.delenv("EMOTION_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = load_emotion()
    assert len(ds.texts("train")) == 1600 and len(ds.texts("validation")) == 400
    assert ds.label_names == EMOTION_LABELS and ds.source == str(EMOTION_SLICE)
    err = capsys.readouterr().err
    assert "hub cannot be reached" in err and err.count("\n") == 1  # its one stray duplicate is under 1 in 1,000
    source = (EMOTION_SLICE / "SOURCE.md").read_text()  # the checksums it states are the files'
    for name in ("train.txt", "val.txt"):
        digest = hashlib.sha256((EMOTION_SLICE / name).read_bytes()).hexdigest()
        assert re.search(rf"{name} {digest}", source), name
    assert load_data().source == str(EMOTION_SLICE)  # what train uses with --data unset


def test_structured_text_columns_are_refused_not_stringified(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": {"body": "hi"}, "label": "a"}\n{"text": {"body": "yo"}, "label": "b"}\n')
    with pytest.raises(RecipesError, match="column 'text' holds a dict, not text"):
        load_data(path)
    path = tmp_path / "l.jsonl"
    path.write_text('{"text": ["a", "b"], "label": "a"}\n{"text": ["c"], "label": "b"}\n')
    with pytest.raises(RecipesError, match="holds a list, not text"):
        load_data(path)


def test_list_labels_are_several_labels_per_text(tmp_path):
    """A JSON list of labels (as the hub's Sequence columns give them) is a text's label set."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "hi", "label": ["a", "b"]}\n{"text": "yo", "label": ["b"]}\n')
    data = load_data(path, hold_out=False)
    assert data.multilabel and data.labels("train") == [("a", "b"), ("b",)]
    path.write_text('{"text": "hi", "label": []}\n{"text": "yo", "label": ["b"]}\n')
    with pytest.raises(RecipesError, match="empty label set"):
        load_data(path, hold_out=False)


def test_duplicate_label_names_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--out", "x", "--labels", "joy,sadness,joy"])
    assert "joy is given twice" in capsys.readouterr().err
    with pytest.raises(RecipesError, match="name each label once"):
        RecipeConfig(labels=["joy", "sadness", "joy"])  # checked where it is written


def test_integer_labels_are_positions_in_the_names_given(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n" + "".join(f"text {i},{i % 2}\n" for i in range(20)))
    ds = load_data(path, Columns(), ["1", "0"])  # label 0 is the first name, "1", as the README says
    texts = ds.texts("train") + ds.texts("validation")
    labels = ds.labels("train") + ds.labels("validation")
    assert all(y == ("1" if int(t.split()[1]) % 2 == 0 else "0") for t, y in zip(texts, labels))
    path.write_text("text,label\n" + "".join(f"text {i},{i % 5}\n" for i in range(20)))
    ds = load_data(path, Columns(), ["1", "2", "3", "4", "5"])  # 0-4 named 1-5: no complaint about "5"
    assert set(ds.labels("train")) == {"1", "2", "3", "4", "5"}
    with pytest.raises(RecipesError, match="label 4 is an id beyond the 4 label names"):
        load_data(path, Columns(), ["a", "b", "c", "d"])
    # star ratings count from 1: the refusal says how to read them (their numbers are names without --labels)
    path.write_text("text,label\n" + "".join(f"text {i},{i % 5 + 1}\n" for i in range(20)))
    with pytest.raises(RecipesError, match="from 0; for labels counted from 1 .star ratings. leave the names out"):
        load_data(path, Columns(), ["awful", "bad", "ok", "good", "great"])
    assert load_data(path, Columns()).label_names == ["1", "2", "3", "4", "5"]


def test_a_header_only_csv_says_so(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n")
    with pytest.raises(RecipesError, match="no rows below the header"):
        load_data(path)


@pytest.mark.parametrize("text", ["\u200b\u200b", "\u00ad", "\ufffd\ufffd", "\ue000\ue001", " \u200d\ufe0f "])
def test_a_training_text_with_nothing_to_read_is_refused_when_read_naming_file_and_row(tmp_path, text):
    from ktrain_recipes.data.loading import load_data

    (tmp_path / "train.txt").write_text(f"i feel fine;joy\n{text};sadness\ni am sad;sadness\n", encoding="utf-8")
    with pytest.raises(RecipesError, match=r"train.txt:2: the text has nothing to read") as error:
        load_data(str(tmp_path))
    assert "\n" not in str(error.value)
    csv = tmp_path / "data.csv"
    csv.write_text(f"text,label\ni feel fine,joy\n{text},sadness\n", encoding="utf-8")
    with pytest.raises(RecipesError, match="nothing to read"):
        load_data(str(csv))


@pytest.mark.parametrize("text", ["\ufffd", "\ue000\ue000"])
def test_replacement_and_private_use_only_texts_get_no_label(text):
    with pytest.raises(RecipesError, match="nothing to classify"):
        check_texts([text])


def test_a_jsonl_records_line_number_counts_blank_lines(tmp_path):
    from ktrain_recipes.data.loading import load_data

    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "i feel fine", "label": "joy"}\n\n\n{"text": "i am sad", "label": "sadness"}\n'
                    '\n{"text": "", "label": "joy"}\n')
    with pytest.raises(RecipesError, match=r"data.jsonl:6: empty text"):
        load_data(str(path))


def test_training_data_not_in_utf8_is_refused_at_its_first_such_line(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes("text,label\nfine,a\nalso fine,b\ncaf\xe9 au lait,a\n".encode("latin-1"))
    with pytest.raises(RecipesError, match=r"mine.csv:4 is not UTF-8 \(byte 0xe9\): save the file as UTF-8"):
        load_data(str(path))


def test_a_label_seen_once_is_named_and_the_split_says_it_is_not_stratified(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    rows = [f"text {i},{'a' if i % 2 else 'b'}" for i in range(40)] + ["the odd one,c"]
    path.write_text("text,label\n" + "\n".join(rows) + "\n")
    ds = load_data(str(path), val_fraction=0.25)
    err = capsys.readouterr().err
    assert "label 'c' has a single row" in err and "add rows for it" in err
    assert "not stratified" in err
    assert sorted(ds.label_names) == ["a", "b", "c"] and len(ds.texts("validation")) == 11


def test_csv_labels_and_texts_are_read_as_written(tmp_path):
    """A label column "007", "7", "010" is three classes, not two numbers; "true" stays "true"; texts of digits
    ("007", "1.50") stay as written. A column of whole numbers ("0", "1", "2") still names ids in numeric order."""
    from ktrain_recipes.data.loading import load_data

    path = tmp_path / "codes.csv"
    rows = ["text,label"] + [f"{t},{y}" for t, y in [("007", "007"), ("1.50", "7"), ("i feel fine", "010"),
                                                       ("i feel bad", "true"), ("007 again", "007"),
                                                       ("seven", "7"), ("ten", "010"), ("yes", "true")]]
    path.write_text("\n".join(rows) + "\n")
    ds = load_data(str(path), hold_out=False)
    assert ds.label_names == ["007", "010", "7", "true"]
    assert ds.texts("train")[:2] == ["007", "1.50"] and ds.labels("train")[:4] == ["007", "7", "010", "true"]
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("text,label\n" + "".join(f"text {i},{i % 11}\n" for i in range(22)))
    assert load_data(str(numbers), hold_out=False).label_names == [str(i) for i in range(11)]  # 10 after 9
    named = load_data(str(numbers), labels=[f"n{i}" for i in range(11)], hold_out=False)
    assert named.labels("train")[:3] == ["n0", "n1", "n2"]  # whole numbers are positions in the names given


def test_a_label_name_with_a_line_break_or_a_tab_is_refused(tmp_path):
    from ktrain_recipes.data.loading import load_data

    for bad in ("very\nsad", "very\tsad"):
        path = tmp_path / "bad.jsonl"
        rows = [{"text": f"text {i}", "label": bad if i % 2 else "happy"} for i in range(8)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(RecipesError, match="holds a line break or a tab"):
            load_data(str(path), hold_out=False)


def test_a_utf16_file_gets_the_utf16_repair_not_the_cp1252_one(tmp_path):
    """Battery v6 W75: a spreadsheet's "Unicode text" export is UTF-16; iconv -f cp1252 would turn it to garbage."""
    path = tmp_path / "mine.csv"
    path.write_bytes("text,label\ni feel fine,joy\ni am sad,sadness\n".encode("utf-16"))
    with pytest.raises(RecipesError, match=r"is UTF-16 .*iconv -f utf-16 -t utf-8") as error:
        load_data(str(path))
    assert "cp1252" not in str(error.value)


def test_data_naming_a_fifo_says_what_it_is_not_that_it_is_missing(tmp_path):
    """W80: --data a FIFO (or a device) was said not to exist."""
    import os

    os.mkfifo(tmp_path / "fifo.csv")
    with pytest.raises(RecipesError, match="is not a regular file or a folder"):
        load_data(str(tmp_path / "fifo.csv"))


def test_csv_line_numbers_count_the_lines_a_quoted_text_spans(tmp_path):
    """Battery v6 W68: a row whose quoted text spans 3 lines shifted every later line number by 2."""
    rows = ['"a text\nover three\nlines",joy'] + [f"text {i},{'joy' if i % 2 else 'sadness'}" for i in range(21)]
    rows.append("the last text,")  # line 1 (header) + 3 + 21 = 25: its label is empty
    path = tmp_path / "quoted_newline.csv"
    path.write_text("text,label\n" + "\n".join(rows) + "\n")
    with pytest.raises(RecipesError, match=r"quoted_newline.csv:26: empty label in column 'label'"):
        load_data(str(path))


@pytest.mark.parametrize("header", ["text,text,label", "text,label,label"])
def test_a_header_naming_a_column_twice_is_refused_as_predict_refuses_it(tmp_path, header):
    """W69: the first column of that name was taken without a word."""
    path = tmp_path / "twice.csv"
    path.write_text(header + "\n" + "\n".join(f"a {i},b {i},{'x' if i % 2 else 'y'}" for i in range(10)) + "\n")
    with pytest.raises(RecipesError, match=r"twice.csv:1: the header names the column '(text|label)' 2 times"):
        load_data(str(path))


def test_blank_lines_before_the_header_hide_no_rows(tmp_path):
    """W76: "no rows below the header" for a file with 20 rows after two blank lines."""
    path = tmp_path / "blank_first.csv"
    path.write_text("\n\ntext,label\n" + "\n".join(f"text {i},{'a' if i % 2 else 'b'}" for i in range(20)) + "\n")
    ds = load_data(str(path), val_fraction=0.25)
    assert len(ds.texts("train")) + len(ds.texts("validation")) == 20


def test_a_ragged_row_is_named_by_its_line_and_its_fields(tmp_path):
    """W77: a row of 4 fields under a 2-column header was blamed on the encoding, with no line."""
    path = tmp_path / "ragged.csv"
    rows = [f"text {i},{'a' if i % 2 else 'b'}" for i in range(6)]
    rows.insert(3, "an, unquoted, text,a")
    path.write_text("text,label\n" + "\n".join(rows) + "\n")
    with pytest.raises(RecipesError, match=r"ragged.csv:5: 4 fields, the header has 2") as error:
        load_data(str(path))
    assert "UTF-8" not in str(error.value)


def test_labels_stay_as_written_when_blank_lines_come_before_the_header(tmp_path):
    """The reader's header came from the file's first line, blank here: the columns were then read as numbers and
    "007" and "7" merged. It now takes the header csv_rows found."""
    path = tmp_path / "codes.csv"
    path.write_text("\n\ntext,label\n" + "\n".join(f"text {i},{'007' if i % 2 else '7'}" for i in range(20)) + "\n")
    assert load_data(str(path), val_fraction=0.25).label_names == ["007", "7"]


def test_a_csv_leaves_no_copy_in_the_datasets_cache(tmp_path, monkeypatch):
    """Battery v6 W78: every version of a file read left its Arrow copy (about its size) in the home folder's
    datasets cache for ever. The copy goes to a temporary folder removed once the columns are read."""
    import tempfile

    import datasets

    from ktrain_recipes.data.readers import read_file

    home_cache, temp = tmp_path / "hf-cache", tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", home_cache)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    csv = tmp_path / "mine.csv"
    csv.write_text("text,label\ni am glad,joy\ni am sad,sadness\n")
    texts, labels, _ = read_file(csv, Columns())
    assert (texts, labels) == (["i am glad", "i am sad"], ["joy", "sadness"])
    assert not home_cache.exists() and list(temp.iterdir()) == []


def test_a_full_disk_under_the_working_copy_is_named_not_blamed_on_the_encoding(tmp_path, monkeypatch):
    """Battery v6 W63: "cannot be read as csv (is it UTF-8 csv?): Not enough disk space" sent the user to the file."""
    import datasets

    from ktrain_recipes.data.readers import read_file

    def full(*args, **kwargs):
        raise OSError("Not enough disk space. Needed: Unknown size (download: Unknown size, generated: Unknown size)")

    monkeypatch.setattr(datasets, "load_dataset", full)
    csv = tmp_path / "fresh.csv"
    csv.write_text("text,label\ni am glad,joy\n")
    with pytest.raises(RecipesError) as caught:
        read_file(csv, Columns())
    message = str(caught.value)
    assert "is full" in message and "TMPDIR" in message and "UTF-8" not in message and "\n" not in message


def test_a_large_file_is_said_before_its_minutes_of_reading(tmp_path, monkeypatch, capsys):
    """Battery v6 W78: a 200 MB CSV took 320 s and 781 MB with no word about either."""
    from ktrain_recipes.data import readers

    monkeypatch.setattr(readers, "LARGE", 10)
    csv = tmp_path / "big.csv"
    csv.write_text("text,label\ni am glad,joy\n")
    readers.read_file(csv, Columns())
    err = capsys.readouterr().err
    assert "big.csv is 0 MB: reading it takes minutes" in err and "TMPDIR" in err and err.count("\n") == 1
