"""Outcome and policy-option words are spelt only in :mod:`gatestats.vocabulary` (issue 29, item 2).

Every module of ``src/gatestats`` is parsed with ``ast`` (nothing is imported) and two kinds of
hand-spelt words fail the test:

1. **An outcome word** (``"passed"``, ``"failed"``, ``"resource_killed"``, ``"infra_error"``) as a
   string constant: write :data:`~gatestats.vocabulary.PASSED` and its siblings, or a tuple such as
   :data:`~gatestats.vocabulary.VALID_OUTCOMES`. In a polars expression (``pl.col("outcome") ==
   "pased"``) mypy cannot see a typo; a misspelt name is a ``NameError``.
2. **A copied word list**: a tuple, list or set of two or more string constants that all belong to
   one of the vocabulary's word tuples (``("block", "warn")``, ``Literal["holm", "bonferroni"]``):
   name the vocabulary's tuple or ``Literal`` instead, so that a new word reaches every reader.

Not flagged, because the word there is a *name*, not an outcome: docstrings, a field or column
name (a subscript ``row["resource_killed"]``, a dict key whose value is not a word,
``.alias("passed")``), and the few modules in :data:`ALLOWED` whose own vocabulary happens to share
a word, each with its reason. The runner (``runner/``, standard library only) cannot import
gatestats and keeps its words in its contract; it is not scanned.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from gatestats import vocabulary
from tests.conftest import ROOT

SRC = ROOT / "src" / "gatestats"

#: The outcome words (the contract's, through the vocabulary).
OUTCOME_WORDS = frozenset(vocabulary.OUTCOMES)

#: The vocabulary's word tuples that a hand-written list must not copy (or copy a part of).
WORD_TUPLES: Mapping[str, tuple[str, ...]] = {
    "OUTCOMES": vocabulary.OUTCOMES,
    "GRADER_VERDICTS": vocabulary.GRADER_VERDICTS,
    "ACTIONS": vocabulary.ACTIONS,
    "DIRECTIONS": vocabulary.DIRECTIONS,
    "RULE_TESTS": vocabulary.RULE_TESTS,
    "JUDGE_CRITERIA": vocabulary.JUDGE_CRITERIA,
    "CORRECTIONS": vocabulary.CORRECTIONS,
    "INFRA_RETRIES": vocabulary.INFRA_RETRIES,
    "GATE_METRICS": vocabulary.GATE_METRICS,
}

#: (module path under src/gatestats, word) -> why that module may spell the word: its own
#: vocabulary shares it with the outcomes. Keep this short; a new entry needs a reason.
ALLOWED: Mapping[tuple[str, str], str] = {
    ("attest/verify.py", "failed"): "a verification check's status (ok, failed, skipped), not a trial outcome",
    ("estimators/recovery.py", "passed"): "a correction round's verdict, a word of the runner's correction journal",
    ("gate/verdict.py", "failed"): "the JUnit <failure> message when a rule gives no reason: text, not an outcome",
}

#: Methods whose string argument is a column name (``.alias("passed")``), not a value.
_NAMING_CALLS = frozenset({"alias", "col", "rename"})


def _docstrings(tree: ast.AST) -> set[int]:
    """The ``id`` of every docstring constant in ``tree``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _names(tree: ast.AST) -> set[int]:
    """The ``id`` of every string constant used as a field or column name (see the module docstring)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(id(node.slice))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and not (
                    isinstance(value, ast.Constant) and isinstance(value.value, str)
                ):
                    found.add(id(key))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _NAMING_CALLS:
            found.update(id(arg) for arg in node.args if isinstance(arg, ast.Constant))
    return found


def spelt_words(source: str, module: str) -> list[str]:
    """One line per hand-spelt outcome word or copied word list in ``source`` (``module:line: ...``), by line."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in OUTCOME_WORDS:
            if id(node) not in skip and (module, node.value) not in ALLOWED:
                found.append((node.lineno, f"outcome word {node.value!r} spelt by hand"))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            copied = _copied_list(node)
            if copied is not None:
                found.append((node.lineno, copied))
    return [f"{module}:{line}: {what}" for line, what in sorted(found)]


def _copied_list(node: ast.Tuple | ast.List | ast.Set) -> str | None:
    """What a literal list of string constants copies from the vocabulary, or None."""
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if len(words) != len(node.elts):
        return None
    for name, vocabulary_words in WORD_TUPLES.items():
        if set(words) <= set(vocabulary_words):
            return f"word list {tuple(words)!r} copies vocabulary.{name}"
    return None


def scan(root: Path = SRC) -> list[str]:
    """Every hand-spelt word under ``root`` (vocabulary.py itself left out)."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module != "vocabulary.py":
            found.extend(spelt_words(path.read_text(encoding="utf-8"), module))
    return found


def test_no_outcome_or_option_word_is_spelt_outside_the_vocabulary() -> None:
    assert scan() == []


def test_the_scan_sees_the_code_base() -> None:
    assert len(list(SRC.rglob("*.py"))) > 150
    # vocabulary.py itself spells every word: scanned like any module, it would fail.
    assert len(spelt_words((SRC / "vocabulary.py").read_text(encoding="utf-8"), "vocabulary.py")) >= 10


def test_every_allowed_word_is_still_spelt_there() -> None:
    stale = []
    for module, word in ALLOWED:
        tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
        if not any(isinstance(n, ast.Constant) and n.value == word for n in ast.walk(tree)):
            stale.append((module, word))
    assert stale == []


def test_a_planted_outcome_word_or_word_list_is_caught_with_its_line() -> None:
    source = '''"""A module that mentions 'passed' in its docstring (allowed)."""
import polars as pl

from gatestats.vocabulary import PASSED

kept = pl.col("outcome") == PASSED
bad = pl.col("outcome") == "infra_error"
action = choice(("block", "warn"))
criterion: Literal["upper_bound", "estimate"]
metric_free = {"pass_rate", "cost_per_accepted"}
counts = row["resource_killed"], {"passed": pl.Int64()}, frame.alias("passed")
copied = {"failed": "passed"}
'''
    assert (spelt_words(source, "gate/x.py")) == [
        "gate/x.py:7: outcome word 'infra_error' spelt by hand",
        "gate/x.py:8: word list ('block', 'warn') copies vocabulary.ACTIONS",
        "gate/x.py:9: word list ('upper_bound', 'estimate') copies vocabulary.JUDGE_CRITERIA",
        "gate/x.py:10: word list ('pass_rate', 'cost_per_accepted') copies vocabulary.GATE_METRICS",
        "gate/x.py:12: outcome word 'failed' spelt by hand",
        "gate/x.py:12: outcome word 'passed' spelt by hand",
    ]


def test_an_allowed_module_may_spell_only_its_own_word() -> None:
    source = 'status = "failed"\noutcome = "passed"\n'
    assert (spelt_words(source, "attest/verify.py")) == ["attest/verify.py:2: outcome word 'passed' spelt by hand"]


def test_the_old_hand_spelt_copies_are_caught() -> None:
    # What the code base held before issue 29 (gate/drift.py, gate/policy.py, gate/rules.py).
    source = (
        '_VALID = ("passed", "failed", "resource_killed")\n'
        'action = r.choice(entry, path, "action", ("block", "warn"), default="block")\n'
        'metric = "pass_hat_k" if rule.metric in {"pass_rate", "pass_hat_k"} else "pass_at_k"\n'
    )
    found = spelt_words(source, "gate/old.py")
    assert "gate/old.py:1: word list ('passed', 'failed', 'resource_killed') copies vocabulary.OUTCOMES" in found
    assert "gate/old.py:2: word list ('block', 'warn') copies vocabulary.ACTIONS" in found
    assert "gate/old.py:3: word list ('pass_rate', 'pass_hat_k') copies vocabulary.GATE_METRICS" in found
    assert sum("outcome word" in line for line in found) == 3
