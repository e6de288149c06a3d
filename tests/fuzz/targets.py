"""What the fuzz suite feeds to whom: each *target* is a kind of file, its mutations, the strict
reader that decides whether a mutant is still valid, and every command that reads that file.

A mutant counts as malformed when it is invalid by construction (``oracle`` None) or the strict
reader refuses it. Each malformed mutant goes through every command of its target, and each run
must: exit non-zero, never say ``pass``, name the mutated file and a line, row, field or key, print
no traceback, and leave none of its output files behind.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import GatestatsError
from gatestats.gate import PolicyError, load_policy
from gatestats.gate.policy import NUMERIC_RANGES
from gatestats.gate.recordset import load_record_set
from gatestats.records import read_record_file
from gatestats_runner.store import encode_record
from tests.fuzz import corpus as base
from tests.fuzz.mutations import (
    CSV_KINDS,
    JSON_KINDS,
    JSONL_KINDS,
    PARQUET_KINDS,
    TOML_KINDS,
    Mutant,
    mutate_csv,
    mutate_json,
    mutate_jsonl,
    mutate_parquet,
    mutate_toml,
)

__all__ = [
    "TARGETS",
    "Command",
    "Outcome",
    "Target",
    "present_paths",
    "run_set_manifest",
    "run_set_records",
    "run_set_valid",
    "run_target",
    "run_target_subprocess",
    "tree_bytes",
    "tree_copy",
]

#: A command: (work directory, mutated file, corpus) -> (arguments, output paths that must not appear).
Command = Callable[[Path, Path, base.Corpus], tuple[list[str], list[Path]]]
#: Does the strict reader accept this file? (None: every mutant is invalid by construction.)
Oracle = Callable[[Path, base.Corpus], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One kind of input file and the commands that read it."""

    name: str
    file: str
    kinds: tuple[str, ...]
    mutate: Callable[[base.Corpus, str, random.Random], Mutant]
    commands: dict[str, Command]
    oracle: Oracle | None = None
    #: Place the mutant (at ``file``, a path inside it) in a copy of this corpus directory (a
    #: :class:`~tests.fuzz.corpus.Corpus` field: ``candidate``, ``stored``, ``rerun``, ``correction``);
    #: no command may change a byte of the copy.
    folder: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one seed of one mutation kind gave: counted as malformed or not, and any failures."""

    malformed: bool
    failures: tuple[str, ...]
    commands: tuple[str, ...]


# --- commands --------------------------------------------------------------------------------------


def _validate(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["validate", str(file)], []


def _analyze(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["analyze", str(file), "--k", "1,2", "--json"], []


def _compare(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["compare", str(file), "--baseline", "baseline", "--candidate", "candidate", "--json"], []


def _cost(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["cost", str(file), "--n-resamples", "200", "--json"], []


def _gate_args(policy: Path, baseline: Path, candidate: Path, work: Path) -> tuple[list[str], list[Path]]:
    outputs = [work / "verdict.json", work / "summary.md", work / "gate.xml"]
    args = ["gate", "--policy", str(policy), "--baseline", str(baseline), "--candidate", str(candidate), "--json"]
    args += ["-o", str(outputs[0]), "--markdown", str(outputs[1]), "--junit", str(outputs[2])]
    return args, outputs


def _gate_baseline(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return _gate_args(c.policy, file, c.candidate, work)


def _gate_candidate(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return _gate_args(c.policy, c.baseline, file.parent, work)


def _gate_policy(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return _gate_args(file, c.baseline, c.candidate, work)


def _policy_check(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["policy", "check", str(file)], []


def _import_table(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "imported.jsonl"
    return ["import", "table", str(file), "--map", base.TABLE_MAP, "--system", "s", "-o", str(out)], [out]


def _import_table_run_set(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "imported-set"
    args = ["import", "table", str(file), "--map", base.TABLE_MAP, "--system", "s", "--run-set", str(out)]
    return [*args, "--policy", str(c.policy)], [out]


def _import_tau(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "tau.jsonl"
    return ["import", "tau-bench", str(file), "-o", str(out)], [out]


def _calibrate(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "cal.json"
    return ["calibrate", str(file), "--map", base.JUDGE_MAP, "--positive", "pass", "-o", str(out), "--json"], [out]


def _calibrate_labels(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "cal.json"
    judgments = work / "judgments.csv"
    judgments.write_bytes(c.files["judgments.csv"])
    args = ["calibrate", str(judgments), "--labels", str(file), "--map", "item=id,label=human,verdict=judge"]
    return [*args, "--positive", "pass", "-o", str(out)], [out]


_CLASSES_MAP = "item=id,label=human,verdict=judge"


def _calibrate_classes(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["calibrate", str(file), "--map", _CLASSES_MAP, "--positive", "pass", "--classes", "pass,fail", "--json"], []


def _calibrate_classes_labels(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    judgments = work / "judgments.csv"
    judgments.write_bytes(c.files["judgments.csv"])
    args = ["calibrate", str(judgments), "--labels", str(file), "--map", _CLASSES_MAP, "--positive", "pass"]
    return [*args, "--classes", "pass,fail", "--judge-model", "j"], []


def _promote_args(trace: Path, expect: Path, golden: Path) -> list[str]:
    args = ["promote", str(trace), "--case-id", "fuzzed", *base.PROMOTE_ARGS, "--expect", str(expect)]
    return [*args, "--set", str(golden)]


def _promote_trace(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    golden = work / "set"
    return _promote_args(file, base.GOLDEN_EXAMPLE / "refund-expect.json", golden), [golden / "proposed" / "fuzzed"]


def _promote_expect(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    golden = work / "set"
    return _promote_args(base.GOLDEN_EXAMPLE / "refund-41-days.json", file, golden), [golden / "proposed" / "fuzzed"]


def _golden_copy(work: Path, file: Path, c: base.Corpus) -> Path:
    golden = work / "set"
    if not golden.exists():
        tree_copy(c.root / "golden", golden)
        shutil.copyfile(file, golden / "golden.json")
    return golden


def _cases_list(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["cases", "list", "--set", str(_golden_copy(work, file, c)), "--json"], []


def _cases_stale(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["cases", "stale", "--set", str(_golden_copy(work, file, c))], []


def _cases_approve(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    golden = _golden_copy(work, file, c)
    return ["cases", "approve", "refund", "--by", "Other Person", "--set", str(golden)], [
        golden / "approved" / "refund"
    ]


def _report(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "reports"
    return ["report", str(file), "--out", str(out), "--renderer", "jupyter"], [out]


def _verify(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["verify", str(file), "--policy", str(c.policy)], []


# --- oracles (the strict readers) ------------------------------------------------------------------


def _record_file_valid(path: Path, c: base.Corpus) -> bool:
    try:
        read_record_file(path)
    except GatestatsError:
        return False
    return True


def run_set_valid(path: Path, c: base.Corpus) -> bool:
    try:
        load_record_set(path.parent)
    except GatestatsError:
        return False
    return True


def _policy_valid(path: Path, c: base.Corpus) -> bool:
    try:
        load_policy(path)
    except PolicyError:
        return False
    return True


# --- mutators over the corpus ----------------------------------------------------------------------

_RECORD_NUMERIC = [("cost_usd",), ("tokens_input",), ("machine_seconds",), ("trial",), ("attempt",)]
_RECORD_NUMERIC += [("artifacts", 0, "bytes"), ("schema_version",)]
_RECORD_REQUIRED = [("schema_version",), ("record_id",), ("run_set_id",), ("system",), ("case_id",), ("trial",)]
_RECORD_REQUIRED += [("attempt",), ("outcome",), ("graders", 0, "name"), ("graders", 0, "verdict")]
_RECORD_CONSTRAINED = [("outcome",), ("graders", 0, "kind"), ("graders", 0, "verdict"), ("started_at",), ("trial",)]
_RECORD_TYPED: list[tuple[str | int, ...]] = [
    ("case_id",),
    ("system",),
    ("slices",),
    ("slices", 1),
    ("graders", 0, "name"),
]
_RECORD_TYPED += [("artifacts", 0, "path"), ("artifacts", 0), ("model_id",), *_RECORD_NUMERIC, *_RECORD_CONSTRAINED]
_RECORD_SPEC: dict[str, Any] = {
    "fields": _RECORD_TYPED,
    "required": _RECORD_REQUIRED,
    "numeric": _RECORD_NUMERIC,
    "constrained": _RECORD_CONSTRAINED,
}


def _records_jsonl(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    return mutate_jsonl(base.base_records(), kind, rng, **_RECORD_SPEC)


def _records_csv(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    numeric = ["cost_usd", "tokens_input", "machine_seconds", "trial", "attempt"]
    constrained = ["outcome", "trial", "started_at", "schema_version"]
    return mutate_csv(
        c.files["records.csv"],
        kind,
        rng,
        numeric=numeric,
        constrained=constrained,
        required=["case_id", "outcome", "trial", "system"],
    )


def _records_parquet(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    frame = pl.read_parquet(c.files["records.parquet"])
    return mutate_parquet(
        frame,
        kind,
        rng,
        ids=["case_id", "system", "record_id"],
        integers=["trial", "attempt", "tokens_input"],
        numbers=["cost_usd", "machine_seconds"],
        required=["case_id", "outcome", "trial", "system"],
    )


def present_paths(doc: Any, paths: list[tuple[str | int, ...]]) -> list[tuple[str | int, ...]]:
    """The paths that exist in ``doc`` (a run set of the runner and one of the gate tests differ in fields)."""
    out = []
    for path in paths:
        value = doc
        try:
            for step in path:
                value = value[step]
        except (KeyError, IndexError, TypeError):
            continue
        out.append(path)
    return out


def run_set_records(key: str) -> Callable[[base.Corpus, str, random.Random], Mutant]:
    """Mutations of the checksummed ``records.jsonl`` of the run set ``c.files[key]``."""

    def mutate(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
        rows = [json.loads(line) for line in c.files[key].splitlines()]
        for row in rows:
            row.pop("checksum", None)
        spec = {
            "fields": [("case_id",), ("trial",), ("outcome",), ("cost_usd",), ("started_at",), ("model_id",)],
            "required": [("case_id",), ("trial",), ("outcome",), ("system",)],
            "numeric": [("trial",), ("cost_usd",), ("machine_seconds",)],
            "constrained": [("outcome",), ("started_at",)],
        }
        spec = {name: present_paths(rows[0], paths) for name, paths in spec.items()}
        if kind in ("truncate", "bom", "huge_line", "not_an_object", "torn_line"):
            return mutate_jsonl(rows, kind, rng, encode=encode_record, **spec)
        return mutate_jsonl(rows, kind, rng, **spec)  # the edited line lost its checksum: refused either way

    return mutate


def run_set_manifest(key: str) -> Callable[[base.Corpus, str, random.Random], Mutant]:
    """Mutations of the ``manifest.json`` of the run set ``c.files[key]``."""

    def mutate(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
        doc = json.loads(c.files[key])
        keys = [(k,) for k in doc]
        numeric = [("trials",), ("records_seal", "size"), ("records_seal", "bytes"), ("records_seal", "lines")]
        numeric += [("baseline_sample", "n"), ("baseline_sample", "seed")]
        constrained = [("format",), ("complete",), ("policy_registered_at",), ("records_seal", "digest")]
        constrained += [("baseline_sample", "format"), ("baseline_sample", "stored", "run_set_id")]
        constrained += [("baseline_sample", "case_ids", 0)]
        return mutate_json(
            doc,
            kind,
            rng,
            fields=[(k,) for k in doc if k not in ("policy_registered_at",)] + [("cases", 0, "case_id")],
            required=keys,
            numeric=present_paths(doc, numeric),
            constrained=present_paths(doc, constrained),
        )

    return mutate


_TABLE_SPEC = {"numeric": ["usd"], "constrained": ["ok", "run", "at"], "required": ["task", "ok", "run"]}


def _table_csv(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    return mutate_csv(c.files["table.csv"], kind, rng, **_TABLE_SPEC)  # type: ignore[arg-type]


_TABLE_JSON_SPEC: dict[str, Any] = {
    "fields": [("task",), ("run",), ("ok",), ("usd",), ("at",)],
    "ids": [("task",)],
    "required": [("task",), ("ok",)],
    "numeric": [("usd",), ("run",)],
    "constrained": [("ok",), ("run",), ("at",)],
}


def _table_jsonl(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    return mutate_jsonl(base.table_rows(), kind, rng, **_TABLE_JSON_SPEC)


def _table_parquet(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    frame = pl.read_parquet(c.files["table.parquet"])
    return mutate_parquet(
        frame, kind, rng, ids=["task"], integers=["run"], numbers=["usd"], required=["task", "ok", "run"]
    )


def _tau(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    items = base.tau_items()
    n = len(items)
    return mutate_json(
        items,
        kind,
        rng,
        fields=[(i, k) for i in range(n) for k in ("task_id", "trial", "reward", "info")],
        required=[(i, k) for i in range(n) for k in ("task_id", "trial")],
        numeric=[(i, k) for i in range(n) for k in ("trial", "reward")] + [(i, "info", "user_cost") for i in range(n)],
        constrained=[(i, k) for i in range(n) for k in ("trial", "reward")],
        ids=[(i, "task_id") for i in range(n)],
    )


def _tau2(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    doc = base.tau2_doc()
    n = len(doc["simulations"])
    sims = [("simulations", i) for i in range(n)]
    return mutate_json(
        doc,
        kind,
        rng,
        fields=[("simulations",), *sims, *[(*s, k) for s in sims for k in ("task_id", "trial", "reward_info")]],
        required=[("simulations",), *[(*s, k) for s in sims for k in ("task_id", "trial")]],
        numeric=[(*s, k) for s in sims for k in ("trial", "agent_cost")]
        + [(*s, "reward_info", "reward") for s in sims],
        constrained=[(*s, k) for s in sims for k in ("trial", "agent_cost")],
        ids=[(*s, "task_id") for s in sims],
    )


_JUDGE_SPEC = {"numeric": ["score"], "constrained": ["human", "judge"], "required": ["id", "human", "judge"]}


def _judgments_csv(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    return mutate_csv(c.files["judgments.csv"], kind, rng, **_JUDGE_SPEC)  # type: ignore[arg-type]


def _labels_csv(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    spec = {"numeric": ["human"], "constrained": ["human"], "required": ["id", "human"]}
    return mutate_csv(c.files["labels.csv"], kind, rng, **spec)  # type: ignore[arg-type]


def _classes_csv(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    """Judgments for the multi-class mode: the label and verdict columns are the classes (score is not read)."""
    spec = {"numeric": ["human", "judge"], "constrained": ["human", "judge"], "required": ["id", "human", "judge"]}
    return mutate_csv(c.files["judgments.csv"], kind, rng, **spec)  # type: ignore[arg-type]


def _judgments_jsonl(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    spec: dict[str, Any] = {
        "fields": [("id",), ("human",), ("judge",), ("score",)],
        "ids": [("id",)],
        "required": [("id",), ("human",)],
        "numeric": [("score",), ("id",)],
        "constrained": [("human",), ("judge",), ("score",)],
    }
    return mutate_jsonl(base.judgment_rows(), kind, rng, **spec)


def _judgments_parquet(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    frame = pl.read_parquet(c.files["judgments.parquet"])
    return mutate_parquet(
        frame, kind, rng, ids=["id", "human", "judge"], integers=["id"], numbers=["score"], required=["id", "human"]
    )


_POLICY_RANGES = {k.split(" ")[0]: v for k, v in NUMERIC_RANGES.items() if "(" not in k}


def _policy(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    return mutate_toml(
        c.files["policy.toml"].decode(),
        kind,
        rng,
        ranges=_POLICY_RANGES,
        required=["format", "name", "version", "k", "min_cases", "min_trials", "on_insufficient_evidence"],
        choices=["multiplicity", "on_insufficient_evidence", "format"],
    )


def _verdict(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    doc = json.loads(c.files["verdict.json"])
    top = [(k,) for k in doc]
    numbers = [p for p in top if isinstance(doc[p[0]], int | float) and not isinstance(doc[p[0]], bool)]
    return mutate_json(
        doc,
        kind,
        rng,
        fields=top,
        required=top,
        numeric=numbers or top,
        constrained=[("verdict",), ("format",), ("digest",)],
    )


#: Mutations that make any JSON document invalid whatever its schema (the golden-set files' own checks
#: are tested in tests/golden; here: the one JSON door's size, depth and strictness).
_FORMAT_KINDS = ("truncate", "byte_flip", "duplicate_key", "nan_inf_overflow", "deep_nesting", "bom", "invalid_utf8")


def _json_doc(name: str) -> Callable[[base.Corpus, str, random.Random], Mutant]:
    def mutate(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
        doc = json.loads(c.files[name])
        top = [(k,) for k in doc]
        return mutate_json(doc, kind, rng, fields=top, required=top, numeric=top, constrained=top)

    return mutate


_RECORD_COMMANDS: dict[str, Command] = {
    "validate": _validate,
    "analyze": _analyze,
    "compare": _compare,
    "cost": _cost,
    "gate": _gate_baseline,
}
_DOC_KINDS = tuple(k for k in JSON_KINDS if k != "extra_field")

TARGETS: tuple[Target, ...] = (
    Target(
        name="records-jsonl",
        file="records.jsonl",
        kinds=JSONL_KINDS,
        mutate=_records_jsonl,
        commands=_RECORD_COMMANDS,
        oracle=_record_file_valid,
    ),
    Target(
        name="records-csv",
        file="records.csv",
        kinds=CSV_KINDS,
        mutate=_records_csv,
        commands=_RECORD_COMMANDS,
        oracle=_record_file_valid,
    ),
    Target(
        name="records-parquet",
        file="records.parquet",
        kinds=PARQUET_KINDS,
        mutate=_records_parquet,
        commands=_RECORD_COMMANDS,
        oracle=_record_file_valid,
    ),
    Target(
        name="run-set-records",
        file="records.jsonl",
        kinds=JSONL_KINDS,
        mutate=run_set_records("runset/records.jsonl"),
        commands={"gate": _gate_candidate},
        oracle=run_set_valid,
        folder="candidate",
    ),
    Target(
        name="run-set-manifest",
        file="manifest.json",
        kinds=JSON_KINDS,
        mutate=run_set_manifest("runset/manifest.json"),
        commands={"gate": _gate_candidate},
        oracle=run_set_valid,
        folder="candidate",
    ),
    Target(
        name="import-table-csv",
        file="table.csv",
        kinds=CSV_KINDS,
        mutate=_table_csv,
        commands={"import table": _import_table, "import table --run-set": _import_table_run_set},
    ),
    Target(
        name="import-table-jsonl",
        file="table.jsonl",
        kinds=tuple(k for k in JSONL_KINDS if k != "extra_field"),
        mutate=_table_jsonl,
        commands={"import table": _import_table},
    ),
    Target(
        name="import-table-parquet",
        file="table.parquet",
        kinds=PARQUET_KINDS,
        mutate=_table_parquet,
        commands={"import table": _import_table},
    ),
    Target(
        name="import-tau-bench",
        file="tau.json",
        kinds=_DOC_KINDS,
        mutate=_tau,
        commands={"import tau-bench": _import_tau},
    ),
    Target(
        name="import-tau2-bench",
        file="tau2.json",
        kinds=_DOC_KINDS,
        mutate=_tau2,
        commands={"import tau-bench": _import_tau},
    ),
    Target(
        name="policy",
        file="policy.toml",
        kinds=TOML_KINDS,
        mutate=_policy,
        commands={"policy check": _policy_check, "gate": _gate_policy},
        oracle=_policy_valid,
    ),
    Target(
        name="calibrate-judgments-csv",
        file="judgments.csv",
        kinds=CSV_KINDS,
        mutate=_judgments_csv,
        commands={"calibrate": _calibrate},
    ),
    Target(
        name="calibrate-judgments-jsonl",
        file="judgments.jsonl",
        kinds=tuple(k for k in JSONL_KINDS if k != "extra_field"),
        mutate=_judgments_jsonl,
        commands={"calibrate": _calibrate},
    ),
    Target(
        name="calibrate-judgments-parquet",
        file="judgments.parquet",
        kinds=PARQUET_KINDS,
        mutate=_judgments_parquet,
        commands={"calibrate": _calibrate},
    ),
    Target(
        name="calibrate-classes-csv",
        file="judgments.csv",
        kinds=CSV_KINDS,
        mutate=_classes_csv,
        commands={"calibrate --classes": _calibrate_classes},
    ),
    Target(
        name="calibrate-classes-labels-csv",
        file="labels.csv",
        kinds=CSV_KINDS,
        mutate=_labels_csv,
        commands={"calibrate --classes --labels": _calibrate_classes_labels},
    ),
    Target(
        name="calibrate-labels-csv",
        file="labels.csv",
        kinds=CSV_KINDS,
        mutate=_labels_csv,
        commands={"calibrate --labels": _calibrate_labels},
    ),
    Target(
        name="promote-trace",
        file="trace.json",
        kinds=_FORMAT_KINDS,
        mutate=_json_doc("trace.json"),
        commands={"promote": _promote_trace},
    ),
    Target(
        name="promote-expect",
        file="expect.json",
        kinds=_FORMAT_KINDS,
        mutate=_json_doc("expect.json"),
        commands={"promote": _promote_expect},
    ),
    Target(
        name="golden-manifest",
        file="golden.json",
        kinds=_FORMAT_KINDS,
        mutate=_json_doc("golden.json"),
        commands={"cases list": _cases_list, "cases stale": _cases_stale, "cases approve": _cases_approve},
    ),
    Target(
        name="verdict",
        file="verdict.json",
        kinds=JSON_KINDS,
        mutate=_verdict,
        commands={"verify": _verify, "report": _report},
    ),
)

_WHERE = re.compile(r":\d+(:|\s|$)|\brow \d+|\bline \d+|field '|key '|\bitem \d+|\bsimulation \d+", re.MULTILINE)


def _check(result: Any, *, name: str, mutant: Mutant, outputs: Sequence[Path]) -> list[str]:
    problems: list[str] = []
    stderr = result.stderr if hasattr(result, "stderr") else result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problems.append(f"uncaught {type(result.exception).__name__}: {result.exception}"[:300])
    if "Traceback" in stderr or "Traceback" in result.stdout:
        problems.append("traceback printed")
    if result.exit_code == 0:
        problems.append("exit 0")
    try:
        body = json.loads(result.stdout)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("verdict") == "pass":
        problems.append("verdict pass")
    if name not in stderr:
        problems.append(f"message does not name {name}")
    elif not _WHERE.search(stderr):
        problems.append("message names no line, row, field or key")
    if mutant.line is not None and problems == [] and f"{name}:" in stderr:
        lines = {int(m) for m in re.findall(re.escape(name) + r":(\d+)", stderr)}
        if lines and mutant.line not in lines:
            problems.append(f"message names line(s) {sorted(lines)}, the defect is on line {mutant.line}")
    left = [str(p.name) for p in outputs if p.exists()]
    if left:
        problems.append(f"left behind: {left}")
    return problems


@dataclass(frozen=True, slots=True, kw_only=True)
class _ProcessResult:
    """A finished ``gatestats`` process, shaped like CliRunner's result for :func:`_check`."""

    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None


def _invoke_process(args: list[str]) -> _ProcessResult:
    script = Path(sys.executable).with_name("gatestats")
    done = subprocess.run([str(script), *args], capture_output=True, check=False, timeout=120)
    return _ProcessResult(
        exit_code=done.returncode,
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
    )


def run_target_subprocess(
    target: Target,
    kind: str,
    seed: int,
    corpus: base.Corpus,
    work: Path,
    *,
    in_process: frozenset[str] = frozenset(),
) -> Outcome:
    """As :func:`run_target`, each command run as a separate ``gatestats`` process, except the commands named in
    ``in_process`` (run with CliRunner, as :func:`run_target` runs them)."""
    runner = CliRunner()

    def invoke(command: str, args: list[str]) -> Any:
        return runner.invoke(app, args) if command in in_process else _invoke_process(args)

    return run_target(target, kind, seed, corpus, work, invoke=invoke)


def run_target(
    target: Target,
    kind: str,
    seed: int,
    corpus: base.Corpus,
    work: Path,
    *,
    invoke: Callable[[str, list[str]], Any] | None = None,
) -> Outcome:
    """Make mutant ``seed`` of ``kind``; if malformed, run every command of ``target`` on it
    (in-process with CliRunner unless ``invoke`` runs the command's arguments another way)."""
    rng = random.Random(f"{target.name}/{kind}/{seed}")
    mutant = target.mutate(corpus, kind, rng)
    work.mkdir(parents=True)
    folder: Path | None = None
    before: dict[str, bytes] = {}
    if target.folder is not None:
        source: Path = getattr(corpus, target.folder)
        folder = work / source.name
        _copy_or_spare(source, folder)
        path = folder / target.file
        # What the copy holds once the mutant is written: the source's files (read once per process; a
        # copy that differed would show as a change below, never hide one) with the mutated file's bytes.
        before = {**_snapshot(source).files, target.file: mutant.data}
    else:
        path = work / target.file
    path.write_bytes(mutant.data)
    if target.oracle is not None and target.oracle(path, corpus):
        if folder is not None and tree_bytes(folder) == before:
            _keep_spare(getattr(corpus, str(target.folder)), folder, target.file)
        return Outcome(malformed=False, failures=(), commands=())
    failures: list[str] = []
    runner = CliRunner()
    unchanged = True
    for command, build in target.commands.items():
        args, outputs = build(work, path, corpus)
        result = runner.invoke(app, args) if invoke is None else invoke(command, args)
        problems = _check(result, name=path.name, mutant=mutant, outputs=outputs)
        after = tree_bytes(folder) if folder is not None else {}
        if folder is not None and after != before:
            changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
            problems.append(f"changed in {folder.name}/: {changed[:5]}")
            unchanged = False
            shutil.rmtree(folder)
            tree_copy(getattr(corpus, str(target.folder)), folder)
            path.write_bytes(mutant.data)
        for problem in problems:
            stderr = (result.stderr if hasattr(result, "stderr") else result.output).strip().replace("\n", " | ")
            failures.append(f"{target.name}/{kind}/{seed} [{command}] {mutant.note[:80]}: {problem} -- {stderr[:300]}")
    if folder is not None and unchanged and target.commands:
        _keep_spare(getattr(corpus, str(target.folder)), folder, target.file)
    return Outcome(malformed=True, failures=tuple(failures), commands=tuple(target.commands))


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path) and its bytes: a command that refuses writes nothing.

    As ``{p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}`` (a link to a
    file counts as the file, a link to a directory is not entered), walked with :func:`os.scandir`, each entry's type
    from the directory listing and each path built as a string: about half the CPU of :func:`os.walk` with
    ``os.path.isfile`` and ``relpath`` per file (issue 28, item 3: the fuzz suite reads a correction output of 72
    files after every command).
    """
    found: dict[str, bytes] = {}

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir():  # as os.walk: a link to a directory is listed, never entered
                    if not entry.is_symlink():
                        walk(entry.path, f"{prefix}{entry.name}/")
                elif entry.is_file():  # follows a link, as os.path.isfile; a dangling link is skipped
                    with open(entry.path, "rb") as handle:
                        found[prefix + entry.name] = handle.read()

    walk(os.fspath(root), "")
    return dict(sorted(found.items()))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Snapshot:
    """A corpus directory as :func:`tree_copy` recreates it: its directories, links, and files with their bytes."""

    dirs: tuple[str, ...]
    links: dict[str, str]
    files: dict[str, bytes]
    stats: dict[str, tuple[int, int, int]]  # file: (mode bits, atime ns, mtime ns)


_SNAPSHOTS: dict[Path, _Snapshot] = {}


def _snapshot(source: Path) -> _Snapshot:
    """``source`` read once per process (the corpus is built once per session and never written: every command
    runs on a copy)."""
    if source not in _SNAPSHOTS:
        dirs: list[str] = []
        links: dict[str, str] = {}
        stats: dict[str, tuple[int, int, int]] = {}
        for folder, subdirs, names in os.walk(source):
            rel = os.path.relpath(folder, source)
            for name in (*subdirs, *names):
                item = os.path.normpath(os.path.join(rel, name))
                full = os.path.join(folder, name)
                if os.path.islink(full):
                    links[item] = os.readlink(full)
                elif name in subdirs:
                    dirs.append(item)
                else:
                    st = os.stat(full)
                    stats[item] = (st.st_mode & 0o7777, st.st_atime_ns, st.st_mtime_ns)
        _SNAPSHOTS[source] = _Snapshot(
            dirs=tuple(dirs),
            links=links,
            files=tree_bytes(source),
            stats={k.replace(os.sep, "/"): v for k, v in stats.items()},
        )
    return _SNAPSHOTS[source]


def tree_copy(source: Path, dest: Path) -> None:
    """``shutil.copytree(source, dest, symlinks=True)`` of a corpus directory, from its snapshot in memory.

    The same directories, links (as links), file bytes, mode bits and file times; a directory's own times are
    not copied (no command reads them). About a third less CPU than copytree's copy2 per file (the fuzz suite
    copies a correction output of 100 directories and 72 files for every mutant of it).
    """
    snap = _snapshot(source)
    base = os.fspath(dest)
    os.mkdir(base)
    for folder in snap.dirs:
        os.mkdir(os.path.join(base, folder))
    for link, to in snap.links.items():
        os.symlink(to, os.path.join(base, link))
    for name, data in snap.files.items():
        if name in snap.stats:
            file = os.path.join(base, name)  # strings, not Paths: half the CPU of a copy (issue 28, item 3)
            with open(file, "wb") as handle:
                handle.write(data)
            mode, atime, mtime = snap.stats[name]
            os.chmod(file, mode)
            os.utime(file, ns=(atime, mtime))


#: A folder per corpus directory that a mutant ran in, checked to be what :func:`tree_copy` makes again (the file
#: the mutant was written to put back): the next mutant of that directory in this process moves it into its own
#: work folder instead of copying the directory again (issue 28, item 3: about 2/3 of the suite's directory copies
#: were the same corpus directories copied once per seed). Never linked: a command that wrote into it must not
#: reach the corpus, and one that did is caught (the folder is then not kept).
_SPARES: dict[Path, Path] = {}


@cache
def _mkdir_mode() -> int:
    """The mode bits ``os.mkdir`` gives a directory in this process (0o777 less the umask)."""
    with tempfile.TemporaryDirectory() as scratch:
        probe = os.path.join(scratch, "probe")
        os.mkdir(probe)
        return os.stat(probe).st_mode & 0o7777


def _copy_or_spare(source: Path, dest: Path) -> None:
    """``dest`` made as :func:`tree_copy` makes it: the kept folder of ``source`` moved there, or a new copy."""
    spare = _SPARES.pop(source, None)
    if spare is None:
        tree_copy(source, dest)
    else:
        os.rename(spare, dest)


def _keep_spare(source: Path, folder: Path, dirty: str) -> None:
    """Keep ``folder`` for the next mutant of ``source`` if it is, but for the file ``dirty`` (whose bytes are
    checked by the caller to be the mutant's), a copy as :func:`tree_copy` makes it: the same directories (with
    the mode ``os.mkdir`` gives), links, files and mode bits, and the same modification times. The caller has checked every file's bytes; the
    access times the commands' reads may have moved, and ``dirty``'s bytes and times, are put back."""
    snap = _snapshot(source)
    base = os.fspath(folder)
    if dirty not in snap.stats:  # a link in the corpus directory: never the case, and never kept
        return
    dirs: set[str] = set()
    links: dict[str, str] = {}
    stats: dict[str, os.stat_result] = {}

    def walk(path: str, prefix: str) -> bool:
        with os.scandir(path) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.is_symlink():
                    links[name] = os.readlink(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    dirs.add(name)
                    if entry.stat(follow_symlinks=False).st_mode & 0o7777 != _mkdir_mode():
                        return False
                    if not walk(entry.path, name + "/"):
                        return False
                elif entry.is_file(follow_symlinks=False):
                    stats[name] = entry.stat(follow_symlinks=False)
                else:
                    return False
        return True

    if (
        os.stat(base).st_mode & 0o7777 != _mkdir_mode()
        or not walk(base, "")
        or dirs != set(snap.dirs)
        or links != snap.links
        or stats.keys() != snap.stats.keys()
    ):
        return
    for name, st in stats.items():
        mode, _, mtime = snap.stats[name]
        if st.st_mode & 0o7777 != mode or (name != dirty and st.st_mtime_ns != mtime):
            return
    with open(os.path.join(base, dirty), "wb") as handle:
        handle.write(snap.files[dirty])
    for name, st in stats.items():
        _, atime, mtime = snap.stats[name]
        if name == dirty or st.st_atime_ns != atime:
            os.utime(os.path.join(base, name), ns=(atime, mtime))
    _SPARES[source] = folder
