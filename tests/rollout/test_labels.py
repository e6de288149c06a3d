"""Late labels: append-only, a checksum per line, each naming a record of the log; a torn line is found."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatestats.errors import RecordFileError
from gatestats.rollout.labels import LABELS, add_labels, read_labels
from gatestats.rollout.log import add_batch, init_log
from tests.conftest import ROOT
from tests.rollout.conftest import observations

HEADER = "record_id,label,observed_at,note\n"


@pytest.fixture
def watch(tmp_path: Path, plan_path: Path, verdict_path: Path) -> Path:
    root = tmp_path / "WATCH"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    add_batch(root, observations(6), stage="shadow", plan_path=plan_path)
    return root


def _table(tmp_path: Path, text: str, name: str = "labels.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_labels_are_appended_with_a_checksum_per_line_and_read_back(watch: Path, tmp_path: Path) -> None:
    table = _table(
        tmp_path,
        HEADER + "obs-1,escaped_defect,2026-11-19T16:30:00Z,wrong refund\nobs-2,rework,2026-11-20T09:00:00+01:00,\n",
    )
    added = add_labels(watch, table)
    assert [(x.record_id, x.label, x.line) for x in added] == [("obs-1", "escaped_defect", 1), ("obs-2", "rework", 2)]
    assert added[0].note == "wrong refund"
    assert added[1].note is None
    assert added[0].source == "labels.csv"
    more = _table(
        tmp_path,
        '{"record_id": "obs-3", "label": "not_accepted", "observed_at": "2026-11-21T00:00:00Z", "source": "crm"}\n',
        "more.jsonl",
    )
    assert [x.line for x in add_labels(watch, more)] == [3]
    labels = read_labels(watch)
    assert [x.record_id for x in labels] == ["obs-1", "obs-2", "obs-3"]
    assert labels[2].source == "crm"
    lines = (watch / LABELS).read_text().splitlines()
    assert all(json.loads(line)["checksum"].startswith("sha256:") for line in lines)


def test_an_empty_log_of_labels_reads_as_none(watch: Path) -> None:
    assert read_labels(watch) == ()


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("obs-99,escaped_defect,2026-11-19T16:30:00Z,", "labels.csv:2: field 'record_id': names no record of the log"),
        ("obs-1,broken,2026-11-19T16:30:00Z,", "labels.csv:2: field 'label': expected one of escaped_defect"),
        ("obs-1,rework,yesterday,", "labels.csv:2: field 'observed_at': expected an RFC 3339 timestamp"),
        ("obs-1,rework,2026-11-19T16:30:00,", "labels.csv:2: field 'observed_at': expected an RFC 3339 timestamp"),
        (",rework,2026-11-19T16:30:00Z,", "labels.csv:2: field 'record_id': required value is missing"),
        ('"obs\u00851",rework,2026-11-19T16:30:00Z,', "labels.csv:2: field 'record_id': control character U+0085"),
        ('obs-1,rework,2026-11-19T16:30:00Z,"a\x1b[2Jb"', "labels.csv:2: field 'note': control character U+001B"),
    ],
)
def test_a_bad_label_is_named_and_nothing_is_appended(watch: Path, tmp_path: Path, row: str, expected: str) -> None:
    good = "obs-2,rework,2026-11-19T16:30:00Z,\n"
    table = _table(tmp_path, HEADER + row + "\n" + good)
    with pytest.raises(RecordFileError) as caught:
        add_labels(watch, table)
    assert expected in str(caught.value), str(caught.value)
    assert not (watch / LABELS).exists()


def test_the_same_label_twice_is_refused(watch: Path, tmp_path: Path) -> None:
    row = "obs-1,escaped_defect,2026-11-19T16:30:00Z,\n"
    with pytest.raises(RecordFileError, match=re.escape("already labelled 'escaped_defect' (line 2)")):
        add_labels(watch, _table(tmp_path, HEADER + row + row))
    add_labels(watch, _table(tmp_path, HEADER + row))
    before = (watch / LABELS).read_bytes()
    with pytest.raises(RecordFileError, match=re.escape("already labelled 'escaped_defect' (labels.jsonl line 1)")):
        add_labels(watch, _table(tmp_path, HEADER + row, "again.csv"))
    assert (watch / LABELS).read_bytes() == before


def test_an_edited_line_and_a_torn_line_are_found(watch: Path, tmp_path: Path) -> None:
    add_labels(
        watch, _table(tmp_path, HEADER + "obs-1,rework,2026-11-19T16:30:00Z,\nobs-2,rework,2026-11-19T16:30:00Z,\n")
    )
    path = watch / LABELS
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"obs-2"', b'"obs-3"'))
    with pytest.raises(RecordFileError, match=re.escape("labels.jsonl:2: field 'checksum': does not match")):
        read_labels(watch)
    path.write_bytes(original + b'{"record_id":"obs-4","lab')
    with pytest.raises(RecordFileError, match=re.escape("labels.jsonl:3: field '<line>': torn last line")):
        read_labels(watch)
    add_labels(watch, _table(tmp_path, HEADER + "obs-4,rework,2026-11-19T16:30:00Z,\n", "late.csv"))
    assert [x.record_id for x in read_labels(watch)] == ["obs-1", "obs-2", "obs-4"]
    path.write_bytes(original.replace(b'"rework"', b'"rework", "rework"', 1))
    with pytest.raises(RecordFileError, match=re.escape("labels.jsonl:1:")):
        read_labels(watch)


_APPENDER = """
import sys
from pathlib import Path
from gatestats.rollout.labels import add_labels
watch, tables = Path(sys.argv[1]), sys.argv[2:]
for table in tables:
    add_labels(watch, table)
    print("added", flush=True)
"""


def test_a_writer_killed_mid_append_leaves_only_complete_labels(watch: Path, tmp_path: Path) -> None:
    """kill -9 of a writer appending labels: the file holds only whole, checksummed lines (or a torn tail)."""
    tables = []
    for i in range(6):
        tables.append(str(_table(tmp_path, HEADER + f"obs-{i},rework,2026-11-19T16:30:00Z,\n", f"t{i}.csv")))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _APPENDER, str(watch), *tables], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "added"
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    path = watch / LABELS
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        with pytest.raises(RecordFileError, match="torn last line"):
            read_labels(watch)
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    labels = read_labels(watch)
    assert 1 <= len(labels) <= 6
    assert [x.record_id for x in labels] == [f"obs-{i}" for i in range(len(labels))]


def test_a_symlinked_label_file_is_refused_and_not_written_through(watch: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(b"")
    (watch / LABELS).symlink_to(elsewhere)
    with pytest.raises(RecordFileError, match="not a regular file"):
        read_labels(watch)
    with pytest.raises(RecordFileError, match="not a regular file"):
        add_labels(watch, _table(tmp_path, HEADER + "obs-1,rework,2026-11-19T16:30:00Z,\n"))
    assert elsewhere.read_bytes() == b""


def test_apply_labels_adds_what_the_labels_say_and_replays_as_of(watch: Path, tmp_path: Path) -> None:
    from gatestats.rollout.labels import apply_labels
    from gatestats.rollout.log import read_log

    rows = (
        "obs-1,escaped_defect,2026-11-19T16:30:00Z,\nobs-2,rework,2026-11-19T16:30:00Z,\n"
        "obs-3,accepted,2026-11-19T16:30:00Z,\nobs-4,not_accepted,2026-11-19T16:30:00Z,\n"
    )
    labels = add_labels(watch, _table(tmp_path, HEADER + rows))
    records = read_log(watch).records
    out = apply_labels(records, labels)
    assert out.height == records.height
    assert out.get_column("record_id").to_list() == records.get_column("record_id").to_list()
    assert out.get_column("escaped_defect").to_list() == [False, True, False, False, False, False]
    assert out.get_column("rework").to_list() == [False, False, True, False, False, False]
    # observations(): accepted = i % 3 != 0 -> obs-3 was not accepted, a late label says it was; obs-4 the reverse
    assert records.get_column("accepted").to_list() == [False, True, True, False, True, True]
    assert out.get_column("accepted_final").to_list() == [False, True, True, True, False, True]
    before = apply_labels(records, labels, as_of="2000-01-01T00:00:00Z")
    assert before.get_column("accepted_final").to_list() == records.get_column("accepted").to_list()
    assert not before.get_column("escaped_defect").any()
