"""``Labels``: ``--label OLD=NEW`` and labels files (CSV, TOML); every refusal names file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatestats.publish import Labels, LabelsError


def test_options_and_files_give_labels_and_ids_stay_without_one(tmp_path: Path) -> None:
    csv = tmp_path / "labels.csv"
    csv.write_text("name,label\nlong-system-a,A\n\n long-system-b , B \n", encoding="utf-8")
    labels = Labels.from_options(["long-system-b=Bee"], csv)
    assert (labels("long-system-a"), labels("long-system-b"), labels("other")) == ("A", "Bee", "other")
    toml = tmp_path / "labels.toml"
    toml.write_text('[labels]\n"20250807_mini-v1.7.0" = "mini"\nplain = "P=1"\n', encoding="utf-8")
    assert dict(Labels.from_options((), toml).names) == {"20250807_mini-v1.7.0": "mini", "plain": "P=1"}
    assert Labels.from_options(["a=b=c"]).names == {"a": "b=c"}
    assert not Labels()
    assert Labels()("x") == "x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name,label\na,A\na,B\n", "labels.csv:3: field 'name': 'a' given twice (first at line 2)"),
        ("name,label\na,X\nb,X\n", "labels.csv:3: field 'label': label 'X' given to 'a' too"),
        ("name,label\na,\n", "labels.csv:2: field 'label': empty"),
        ("name,label\n,A\n", "labels.csv:2: field 'name': empty"),
        ("name,label\na,A,extra\n", "labels.csv:2: field '<line>': expected 2 fields name,label (got 3)"),
        ("system,label\na,A\n", "labels.csv:1: field '<header>': the header must be name,label"),
        ("", "labels.csv: field '<file>': empty: no name,label header"),
        ('name,label\na,"A\x07"\n', "labels.csv:2: field 'label': control or invisible character in 'A\\x07'"),
        ("name,label\na,A\u202eB\n", "labels.csv:2: field 'label': control or invisible character"),
        ('name,label\na,"two\nlines"\n', "field 'label': control or invisible character in 'two\\nlines'"),
        ("name,label\na," + "x" * 201 + "\n", "labels.csv:2: field 'label': longer than 200 characters"),
    ],
)
def test_a_bad_csv_is_refused_naming_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabelsError) as caught:
        Labels.from_options((), path)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[labels]\na = 3\n", "labels.toml:2: field 'labels.a': a label is a string (got int)"),
        ('[labels]\na = "x\\u0000"\n', "labels.toml:2: field 'label': control or invisible character"),
        ('[other]\na = "b"\n', "field '<file>': expected one [labels] table"),
        ("[labels\n", "field '<file>': not TOML"),
        ('[labels]\na = "X"\nb = "X"\n', "labels.toml:3: field 'label': label 'X' given to 'a' too"),
    ],
)
def test_a_bad_toml_file_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "labels.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LabelsError) as caught:
        Labels.from_options((), path)
    assert message in str(caught.value)


def test_bad_options_and_unknown_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LabelsError, match=r"--label:2: field '<value>': expected OLD=NEW \(got 'nolabel'\)"):
        Labels.from_options(["a=A", "nolabel"])
    with pytest.raises(LabelsError, match=r"--label:2: field 'name': 'a' labelled twice \(--label:1 says 'A'\)"):
        Labels.from_options(["a=A", "a=B"])
    labels = Labels.from_options(["a=A", "typo=T"])
    labels.check_known(["a", "typo", "c"])
    with pytest.raises(
        LabelsError, match=r"--label:2: field 'name': 'typo' is none of the ids shown here \('a', 'b'\)"
    ):
        labels.check_known(["a", "b"])
    with pytest.raises(LabelsError, match="no such labels file"):
        Labels.from_options((), tmp_path / "missing.csv")
    (tmp_path / "bin.csv").write_bytes(b"name,label\n\xff,x\n")
    with pytest.raises(LabelsError, match="not UTF-8"):
        Labels.from_options((), tmp_path / "bin.csv")
