"""Hostile data stays inert in the Markdown and JUnit outputs; output files are created exclusively, all or none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import CheckResult, RuleResult, SevereSliceResult, Verdict, load_policy
from gatestats.gate.bindings import PolicyBinding, SideBinding, SystemBinding
from gatestats.gate.registration import Registration
from gatestats.io import files as _files
from gatestats.io.files import rename_directory_once, write_new_files
from gatestats.io.text import visible
from tests.gate.factory import write_run_set
from tests.hypothesis_counts import examples

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a`b``c```",
    "x\n# pass\n",
    "\n## ✅ gatestats gate: `pass`\n",
    "| a | b |",
    "# pass",
    "- [x] done",
    "1. one",
    "=== ---",
    "**bold** _em_ ~~del~~ [link](https://x.test) ![i](https://x.test/i.png) $x^2$ <https://x.test>",
    "&lt;b&gt; &amp; &#60;script&#62;",
    "".join(chr(c) for c in range(0x20)) + "\x7f",
    "u\u2028v\u2029w\x85\u202ex\ufeffy\u200bz",
    "\ud800 lone surrogate",
    "\ufffe\uffff",
    "    indented",
    "back\\slash\\ \\` \\<",
    "[/] [bold red]markup[/]",
    "L" * 5000,
    "",
]
"""Strings that try to break out of a Markdown line, cell or code span, inject HTML, or break XML."""

ALLOWED_TAGS = {"h2", "h3", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code", "sub", "strong"}
HEADINGS = [
    "❌ gatestats gate: fail",
    "Reasons",
    "Rules",
    "Severe slices (every trial must pass)",
    "Flips per case",
    "Blocking on silence",
]
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


class _Html(HTMLParser):
    """Start tags and the text inside each element of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.stack: list[list[Any]] = []
        self.elements: list[tuple[str, str]] = []
        self.row_cells: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.stack.append([tag, []])
        if tag == "tr":
            self.row_cells.append(0)
        elif tag in ("td", "th"):
            self.row_cells[-1] += 1

    def handle_endtag(self, tag: str) -> None:
        name, parts = self.stack.pop()
        assert name == tag
        text = "".join(parts)
        self.elements.append((tag, text))
        if self.stack:
            self.stack[-1][1].append(text)

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.stack[-1][1].append(data)


def _render(markdown: str) -> _Html:
    """CommonMark with GitHub's tables and strikethrough, raw HTML passed through (as GitHub allows some)."""
    html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)
    parsed = _Html()
    parsed.feed(html)
    parsed.close()
    return parsed


def _texts(parsed: _Html, tag: str) -> list[str]:
    return [text for name, text in parsed.elements if name == tag]


def _assert_inert_markdown(markdown: str, *, n_reasons: int) -> _Html:
    assert RAW_CONTROL.search(markdown) is None
    parsed = _render(markdown)
    assert set(parsed.tags) <= ALLOWED_TAGS, set(parsed.tags) - ALLOWED_TAGS
    assert _texts(parsed, "h2") + _texts(parsed, "h3") == HEADINGS
    assert parsed.row_cells == [7, 7, 7, 7, 4, 4]  # rules: header + 3 rows; severe slices: header + 1 row
    assert parsed.tags.count("li") == n_reasons + 2 + 1  # reasons, two flip lines, one blocking check
    return parsed


def _side(h: str) -> SideBinding:
    """A record set binding whose system label is ``h``."""
    return SideBinding(
        path=h, kind="records", digest=h, files=(), n_records=0, run_set_id=None, complete=None,
        case_set_version=None, trials=None, policy_digest=None, policy_registered_at=None, origin=None,
        checksums="none", records_seal=None, imported_from=None, imported_source_digest=None, imported_by=None,
        imported_at=None, system=h, system_digest=(), system_parts={}, task_set_version=(),
    )  # fmt: skip


def _verdict(h: str) -> Verdict:
    """A verdict whose every string that can come from data is ``h``."""

    def rule(decision: str) -> RuleResult:
        return RuleResult(
            rule=h, row=h, metric="pass_rate", slice=h, k=1, kind="threshold", action="block", observed=0.5,
            baseline=0.6, ci_low=0.4, ci_high=0.6, threshold=0.7, margin=None, test=h, alpha=0.05, pvalue_pass=0.5,
            pvalue_fail=0.01, pvalue_pass_adjusted=0.5, pvalue_fail_adjusted=0.01, n_cases=10,
            decision=decision, reason=h,  # type: ignore[arg-type]
        )  # fmt: skip

    return Verdict(
        verdict="fail",
        reasons=(h, f"{h}: {h}"),
        checks=(
            CheckResult(name=h, side="candidate", status="insufficient_evidence", detail=h),
            CheckResult(name=h, side="both", status="ok", detail=h),
        ),
        rules=(rule("fail"), rule("warn"), rule("insufficient_evidence")),
        severe_slices=(
            SevereSliceResult(
                slice=h,
                n_cases=1,
                n_trials=2,
                n_passed=1,
                failures=(),
                baseline_failures=None,
                decision="fail",
                reason=h,
            ),
        ),
        flips_pass_to_fail=(h, f"{h}@{h}"),
        flips_fail_to_pass=(h,),
        cost=None,
        judges=None,
        policy=PolicyBinding(
            path=h,
            digest=h,
            name=h,
            version=h,
            k=1,
            min_cases=1,
            min_trials=1,
            max_infra_error_rate=0.05,
            multiplicity="holm",
            on_insufficient_evidence="block",
            confidence_level=0.95,
            seed=0,
            severe_slices=(),
            max_cost_increase=None,
            case_set_version=None,
            require_checksums=True,
            baseline=SystemBinding(system=h, system_digest=None, pins={}),
            candidate=SystemBinding(system=h, system_digest=None, pins={}),
        ),
        registration=Registration(run_set=h, policy_digest=h, registered_at=h, first_record_at=None, origin=h),
        baseline=_side(h),
        candidate=_side(h),
        infra={},
        tool_version=h,
        created_at=h,
    )


def _check_outputs(h: str) -> None:
    verdict = _verdict(h)
    root = ET.fromstring(verdict.to_junit().encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("6", "4", "1")
    for element in root.iter():
        for value in [*element.attrib.values(), element.text or ""]:
            assert XML_FORBIDDEN.search(value) is None
    names = [case.get("name") for case in root.iter("testcase")]
    markdown = verdict.to_markdown()
    parsed = _assert_inert_markdown(markdown, n_reasons=2)
    if len(h) <= 100:  # shown whole: the rendered text is the data with only invisible characters escaped
        assert names[2] == f"rule: {visible(h)}"
        assert names[-1] == f"severe slice: {visible(h)}"
        failure = root.find("testcase/failure[@type='fail']")
        assert failure is not None
        assert (failure.text or "") == visible(h, keep="\n\t")
        shown = visible(h) if h else "(empty)"  # Markdown names an empty value
        assert _texts(parsed, "strong")[0].strip() == shown.strip()  # the policy name
        assert [c.strip() for c in _texts(parsed, "code")[1:4]] == [shown.strip()] * 3  # digest, systems
        assert _texts(parsed, "li")[0].strip() == shown.strip()
        assert _texts(parsed, "td")[0].strip() == shown.strip()
    else:
        assert f"… (+{len(h) - 200} characters)" in markdown
        assert max(len(line) for line in markdown.splitlines()) < 20_000


@pytest.mark.parametrize("h", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_in_every_field_gives_parsable_junit_and_inert_markdown(h: str) -> None:
    _check_outputs(h)


@settings(max_examples=examples(150))
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=40))
@example("\x00<script>`|\n#")
def test_any_text_in_every_field_gives_parsable_junit_and_inert_markdown(h: str) -> None:
    _check_outputs(h)


def test_markdown_lists_at_most_fifty_flip_ids() -> None:
    verdict = _verdict("x")
    many = Verdict(**{**{f: getattr(verdict, f) for f in verdict.__slots__}, "flips_pass_to_fail": ("c",) * 120})
    line = next(line for line in many.to_markdown().splitlines() if line.startswith("- pass → fail"))
    assert line.count("<code>c</code>") == 50
    assert line.endswith("… and 70 more (the verdict file lists them all)")


def test_terminal_lists_at_most_fifty_flip_ids_and_long_lists_stay_linear() -> None:
    """The terminal caps a flip list as the Markdown does; 20,000 distinct ids (a 1M-record gate lists
    that many) are shortened in one pass (a list.count per id made the Markdown quadratic)."""
    from gatestats.cli.gate import _case_ids

    ids = tuple(f"case-{i:05d}@sha256:{i:064x}" for i in range(20_000))
    shown = _case_ids(ids)
    assert shown.count("case-") == 50
    assert shown.endswith("… and 19950 more (the verdict file lists them all)")
    assert _case_ids(ids[:3]) == "case-00000, case-00001, case-00002"
    assert _case_ids(()) == "none"
    verdict = _verdict("x")
    many = Verdict(**{**{f: getattr(verdict, f) for f in verdict.__slots__}, "flips_pass_to_fail": ids})
    line = next(line for line in many.to_markdown().splitlines() if line.startswith("- pass → fail"))
    assert line.count("<code>") == 50
    assert line.endswith("… and 19950 more (the verdict file lists them all)")


# --- through the real CLI ------------------------------------------------------------------------

# A policy refuses control characters in its names (gatestats.io.limits.name_problem): the hostile
# names below use only what a policy accepts (line and paragraph separators, a right-to-left
# override, HTML, backticks, pipes); test_policy_refuses_control_characters_in_names covers the rest.
BASE_SYSTEM = "base <img src=x onerror=alert(1)> `x` | y \u202e[31m\u2028[/]"
CAND_SYSTEM = "cand\u2028# pass\u2029<script>alert(1)</script>``"
POLICY_NAME = "evil\u2028## ✅ gatestats gate: `pass`\u2029<script>alert(2)</script>"
SEVERE = "sev <i>`|\u2028# pass"
RULE = "rule <b>|x\u2028# pass `y`"
CLI_IDS = [h for h in HOSTILE if h and "\ud800" not in h]


def _hostile_gate_inputs(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, list[str]]]:
    def q(text: str) -> str:  # a TOML basic string (JSON's escapes are TOML's)
        return json.dumps(text)

    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(
        f"""
format = "gatestats-policy/1"
name = {q(POLICY_NAME)}
version = {q("1`<b>&")}
k = 1
min_cases = 5
min_trials = 1
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"
severe_slices = [{q(SEVERE)}]
case_grouping = "independent"

[baseline]
system = {q(BASE_SYSTEM)}

[candidate]
system = {q(CAND_SYSTEM)}

[[rules]]
name = {q(RULE)}
metric = "pass_rate"
threshold = 0.99
""",
        encoding="utf-8",
    )
    policy = load_policy(policy_path)
    cand = {f"{h}-{i}": ["failed" if i % 2 == 0 else "passed"] for i, h in enumerate(CLI_IDS * 2)}
    base = {key: ["passed"] for key in cand}
    slices = {CLI_IDS[0] + "-0": [SEVERE]}
    b = write_run_set(tmp_path / "base", system=BASE_SYSTEM, outcomes=base, slices=slices, model_id="model-new")
    c = write_run_set(tmp_path / "cand", system=CAND_SYSTEM, outcomes=cand, policy=policy, slices=slices)
    return policy_path, b, c, cand


def _gate(policy: Path, base: Path, cand: Path, *extra: str | Path) -> Any:
    args = ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand)]
    return CliRunner().invoke(app, [*args, *(str(e) for e in extra)])


def test_hostile_ids_labels_and_policy_name_through_the_gate_cli(tmp_path: Path) -> None:
    policy, b, c, cand = _hostile_gate_inputs(tmp_path)
    out, md, junit = tmp_path / "v.json", tmp_path / "s.md", tmp_path / "j.xml"
    result = _gate(policy, b, c, "-o", out, "--markdown", md, "--junit", junit)
    assert result.exit_code == 11, result.output
    assert "\x1b" not in result.output
    assert "\x00" not in result.output
    body = json.loads(out.read_text(encoding="utf-8"))
    failed = sorted(k for k, v in cand.items() if v == ["failed"])
    assert sorted(label.rsplit("@", 1)[0] for label in body["flips"]["pass_to_fail"]) == failed  # kept whole
    assert body["candidate"]["system"] == CAND_SYSTEM
    assert body["policy"]["name"] == POLICY_NAME
    root = ET.parse(junit).getroot()
    names = [case.get("name") for case in root.iter("testcase")]
    assert f"severe slice: {visible(SEVERE)}" in names
    assert [n for n in names if n.startswith("rule: ")] == [
        n for n in names if n.startswith(f"rule: {visible(RULE)}: ")
    ]
    severe = root.find(f"testcase[@name='severe slice: {visible(SEVERE)}']/failure")
    assert severe is not None
    assert visible(CLI_IDS[0]) in (severe.get("message") or "")
    markdown = md.read_text(encoding="utf-8")
    assert RAW_CONTROL.search(markdown) is None
    assert re.findall(r"^#.*$", markdown, flags=re.MULTILINE) == [
        "## ❌ gatestats gate: `fail`",
        "### Reasons",
        "### Rules",
        "### Severe slices (every trial must pass)",
        "### Flips per case",
    ]
    parsed = _render(markdown)
    assert set(parsed.tags) <= ALLOWED_TAGS
    assert _texts(parsed, "strong")[0] == visible(POLICY_NAME)
    assert _texts(parsed, "code")[2:4] == [visible(BASE_SYSTEM), visible(CAND_SYSTEM)]
    assert len(_texts(parsed, "code")) == 4 + len(failed)  # verdict, digest, two systems, one per flip
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "<script" not in markdown


# --- output files: exclusive, all or none --------------------------------------------------------


@pytest.fixture
def passing_gate(tmp_path: Path) -> tuple[Path, Path, Path]:
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(
        """
format = "gatestats-policy/1"
name = "p"
version = "1"
k = 1
min_cases = 5
min_trials = 1
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"

[baseline]
system = "baseline"

[candidate]
system = "candidate"

[[rules]]
name = "floor"
metric = "pass_rate"
threshold = 0.5
""",
        encoding="utf-8",
    )
    outcomes = {f"c{i:02d}": ["passed"] for i in range(40)}
    b = write_run_set(tmp_path / "base", system="baseline", outcomes=outcomes)
    c = write_run_set(tmp_path / "cand", system="candidate", outcomes=outcomes, policy=load_policy(policy_path))
    return policy_path, b, c


def test_markdown_target_that_is_a_directory_exits_2_and_leaves_no_verdict_file(
    passing_gate: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "dir").mkdir()
    result = _gate(*passing_gate, "-o", tmp_path / "v.json", "--markdown", tmp_path / "dir")
    assert result.exit_code == 2
    assert f"{tmp_path / 'dir'}: --markdown: is a directory" in result.output
    assert not (tmp_path / "v.json").exists()


@pytest.mark.parametrize("option", ["--markdown", "--junit"])
def test_existing_markdown_or_junit_target_is_refused_and_nothing_is_written(
    passing_gate: tuple[Path, Path, Path], tmp_path: Path, option: str
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("earlier\n", encoding="utf-8")
    other = "--junit" if option == "--markdown" else "--markdown"
    result = _gate(*passing_gate, "-o", tmp_path / "v.json", option, taken, other, tmp_path / "other")
    assert result.exit_code == 2
    assert f"{taken}: {option}: already exists; output files are never overwritten" in result.output
    assert taken.read_text(encoding="utf-8") == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "cand", "policy.toml", "taken"]


def test_an_output_that_fails_while_writing_takes_the_others_with_it(
    passing_gate: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    bad = tmp_path / "file" / "gate.xml"  # its parent is a file: found by the writer, not the early check
    result = _gate(*passing_gate, "-o", tmp_path / "out" / "v.json", "--markdown", tmp_path / "s.md", "--junit", bad)
    assert result.exit_code == 2
    assert f"{bad}: cannot write here: {tmp_path / 'file'} is not a directory; no output file was written" in (
        result.output
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "cand", "file", "policy.toml"]


def test_one_path_given_for_two_outputs_is_refused_with_nothing_written(
    passing_gate: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    same = tmp_path / "x.json"
    result = _gate(*passing_gate, "-o", same, "--junit", tmp_path / "." / "x.json")
    assert result.exit_code == 2
    assert "x.json: named twice among the outputs (each output needs its own file); no output file was written" in (
        result.output
    )
    assert not same.exists()


def test_markdown_append_adds_the_summary_to_an_existing_job_summary(
    passing_gate: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    result = _gate(*passing_gate, "--markdown-append", summary, "--markdown", tmp_path / "s.md")
    assert result.exit_code == 0, result.output
    own = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert own.startswith("## ✅ gatestats gate: `pass`")
    assert summary.read_text(encoding="utf-8") == "# earlier step\n" + own
    (tmp_path / "j.xml").write_text("", encoding="utf-8")
    refused = _gate(*passing_gate, "--markdown-append", summary, "--junit", tmp_path / "j.xml")
    assert refused.exit_code == 2
    assert summary.read_text(encoding="utf-8") == "# earlier step\n" + own  # a refused run appends nothing


def test_a_target_that_appears_while_writing_removes_the_files_already_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "new" / "a.json", tmp_path / "new" / "b.md"
    real_link = os.link
    calls: list[str] = []

    def racing_link(source: Any, target: Any) -> None:
        calls.append(str(target))
        if len(calls) == 2:
            Path(target).write_bytes(b"racer")  # another writer takes the second file meanwhile
        real_link(source, target)

    monkeypatch.setattr(_files.os, "link", racing_link)
    with pytest.raises(FileExistsError, match=r"b\.md: already exists; output files are never overwritten"):
        write_new_files([(second, b"mine"), (first, b"mine")])
    assert calls == [str(first), str(second)]  # linked in sorted order
    assert not first.exists()  # ours, removed
    assert second.read_bytes() == b"racer"  # theirs, kept
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["b.md"]  # no temporary file left


def test_write_new_files_checks_every_target_before_writing(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError, match="dangling: already exists"):
        write_new_files([(tmp_path / "deep" / "a", b"a"), (tmp_path / "dangling", b"b")])
    with pytest.raises(ValueError, match="named twice among the outputs"):
        write_new_files([(tmp_path / "a", b"a"), (tmp_path / "x" / ".." / "a", b"b")])
    with pytest.raises(IsADirectoryError, match="is a directory"):
        write_new_files([(tmp_path / "a", b"a")], append=[(tmp_path, b"b")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling"]


def test_of_threads_racing_for_the_same_files_exactly_one_wins_whole(tmp_path: Path) -> None:
    for round_ in range(20):
        folder = tmp_path / str(round_)
        barrier = threading.Barrier(4)
        won: list[int] = []

        def write(n: int, folder: Path = folder, barrier: threading.Barrier = barrier, won: list[int] = won) -> None:
            outputs = [(folder / "v.json", b"verdict %d" % n), (folder / "s.md", b"summary %d" % n)]
            barrier.wait()
            try:
                write_new_files(outputs[:: 1 if n % 2 else -1])  # given in either order
            except FileExistsError:
                return
            won.append(n)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1
        assert (folder / "v.json").read_bytes() == b"verdict %d" % won[0]
        assert (folder / "s.md").read_bytes() == b"summary %d" % won[0]
        assert sorted(p.name for p in folder.iterdir()) == ["s.md", "v.json"]


def test_rename_directory_once_never_replaces_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "built").mkdir()
    (tmp_path / "built" / "f").write_text("x", encoding="utf-8")
    (tmp_path / "target").mkdir()
    with pytest.raises(FileExistsError, match="target: already exists"):
        rename_directory_once(tmp_path / "built", tmp_path / "target")
    assert (tmp_path / "built" / "f").exists()
    assert not any((tmp_path / "target").iterdir())
    rename_directory_once(tmp_path / "built", tmp_path / "new")
    assert (tmp_path / "new" / "f").read_text(encoding="utf-8") == "x"


# --- two processes racing for one output ---------------------------------------------------------

GATESTATS = Path(sys.executable).with_name("gatestats")


@pytest.mark.parametrize(
    ("mode", "rounds"),
    [("-o", 1), pytest.param("-o", 5, marks=pytest.mark.slow), pytest.param("--run-set", 3, marks=pytest.mark.slow)],
)
def test_two_importers_racing_for_one_output_exactly_one_wins(tmp_path: Path, mode: str, rounds: int) -> None:
    # Two processes started together (about 3 s each on an idle machine, 20 s on a loaded one).
    table = tmp_path / "t.csv"
    table.write_text("task,ok\n" + "".join(f"c{i},{i % 2}\n" for i in range(30)), encoding="utf-8")
    for round_ in range(rounds):
        target = tmp_path / f"out{round_}{'.jsonl' if mode == '-o' else ''}"
        command = [str(GATESTATS), "import", "table", str(table), "--map", "case_id=task,outcome=ok", mode]
        procs = {
            system: subprocess.Popen(
                [*command, str(target), "--system", system], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for system in ("alpha", "beta")
        }
        done = {system: (p.wait(timeout=120), p.communicate()[1]) for system, p in procs.items()}
        winners = [s for s, (code, _) in done.items() if code == 0]
        assert len(winners) == 1, done
        loser = next(s for s in done if s not in winners)
        assert done[loser][0] == 1
        assert f"{target}" in done[loser][1]
        assert "exists" in done[loser][1]
        records = target if mode == "-o" else target / "records.jsonl"
        rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
        assert len(rows) == 30
        assert {r["system"] for r in rows} == set(winners)
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_a_release_report_never_replaces_an_empty_version_directory_made_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatestats.report import release as release_module

    release_dir = tmp_path / "r"
    built = release_dir / ".building-x"
    built.mkdir(parents=True)
    (built / "report.html").write_text("new", encoding="utf-8")

    def racing_rename(source: Path, target: Path) -> None:
        if target.name == "1":
            target.mkdir()  # another process makes version 1 between the check and the rename
        rename_directory_once(source, target)

    monkeypatch.setattr(release_module, "rename_directory_once", racing_rename)
    version, target = release_module._move_into_place(built, release_dir)
    assert (version, target) == (2, release_dir / "2")
    assert not any((release_dir / "1").iterdir())
    assert (release_dir / "2" / "report.html").read_text(encoding="utf-8") == "new"
