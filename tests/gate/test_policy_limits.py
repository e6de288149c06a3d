"""Size, depth and name limits of a policy file: exit 2 naming the key and line, never a traceback (issue 24)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import parse_policy
from gatestats.io import toml_lines
from gatestats.io.limits import NAME_MAX_CHARS, POLICY_MAX_BYTES, TOML_MAX_DEPTH
from gatestats.io.toml_lines import too_deep
from tests.deadline import passes_within
from tests.gate.factory import policy_text, write_run_set
from tests.gate.test_policy import RULE, _problems
from tests.hypothesis_counts import examples


def _line_of(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if line.startswith(start))


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("[" * 600 + "]" * 600, "arrays"),
        ("{a = " * 600 + "1" + "}" * 600, "inline tables"),
        ("[{a = " * 300 + "1" + "}]" * 300, "arrays of inline tables"),
        ("[" * (TOML_MAX_DEPTH + 1) + "]" * (TOML_MAX_DEPTH + 1), "one level past the limit"),
    ],
)
def test_a_deeply_nested_value_names_its_key_and_line(value: str, what: str) -> None:
    text = policy_text(RULE, extra="deep = " + value)
    line = _line_of(text, "deep = ")
    assert _problems(text) == [
        f"p.toml:{line}: key 'deep': nested deeper than {TOML_MAX_DEPTH} levels (arrays, inline tables or dotted keys)"
    ], what


def test_deep_dotted_keys_and_table_headers_are_refused_too() -> None:
    dotted = policy_text(RULE + ".".join(["a"] * 600) + " = 1\n")
    [problem] = _problems(dotted)
    assert problem.startswith(f"p.toml:{len(dotted.splitlines())}: key 'rules[0].a.a.a.")
    assert problem.endswith(f"nested deeper than {TOML_MAX_DEPTH} levels (arrays, inline tables or dotted keys)")
    header = policy_text(RULE + "[" + ".".join(["t"] * 600) + "]\nx = 1\n")
    [problem] = _problems(header)
    assert problem.startswith(f"p.toml:{len(header.splitlines()) - 1}: key 't.t.t.")


def test_nesting_at_the_limit_is_read_by_toml_and_brackets_in_strings_and_comments_do_not_count() -> None:
    at_limit = "[" * (TOML_MAX_DEPTH - 1) + "]" * (TOML_MAX_DEPTH - 1)  # inside [[rules]]: one level more
    assert too_deep(f"[[rules]]\nx = {at_limit}\n", TOML_MAX_DEPTH) is None
    brackets = "[" * 100
    quoted = f's = "{brackets}"\nl = \'{brackets}\'\nm = """\n{brackets}\n"""\n# {brackets}\ne = "a\\"{brackets}"\n'
    assert too_deep(quoted, TOML_MAX_DEPTH) is None
    # a policy with such strings is still a policy (an unknown key, not a depth error)
    assert "unknown key" in _problems(policy_text(RULE + f'description2 = "{brackets}"\n'))[0]


def test_an_unclosed_string_cannot_hide_a_deep_value_on_the_next_line() -> None:
    deep = "[" * 600
    assert too_deep(f'a = "unclosed\nb = {deep}\n', TOML_MAX_DEPTH) == (2, ("b",))
    assert too_deep(f"a = 'unclosed\nb = {deep}\n", TOML_MAX_DEPTH) == (2, ("b",))


def test_a_policy_larger_than_the_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    big = policy_text(RULE) + "#" + "x" * POLICY_MAX_BYTES + "\n"
    assert _problems(big) == [
        f"p.toml: key '(file)': {len(big.encode())} bytes is larger than the limit of {POLICY_MAX_BYTES} bytes "
        "for a policy"
    ]
    path = tmp_path / "big.toml"
    path.write_text(big, encoding="utf-8")
    result = CliRunner().invoke(app, ["policy", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}: key '(file)': larger than {POLICY_MAX_BYTES} bytes: not a policy file" in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_policy_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "policy.toml"
    os.mkfifo(fifo)
    result = CliRunner().invoke(app, ["policy", "check", str(fifo)])
    assert result.exit_code == 2
    assert "not a regular file (expected a policy file)" in result.output


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ('name = "test-policy"', 'name = "test\\u0000policy"', "name"),
        ('version = "1"', 'version = "1\\u001b[31m"', "version"),
        ('name = "not worse"', 'name = "not\\nworse"', "rules[0].name"),
        ('metric = "pass_rate"', 'metric = "pass_rate"\nslice = "s\\u007f"', "rules[0].slice"),
        ('[baseline]\nsystem = "baseline"', '[baseline]\nsystem = "base\\tline"', "baseline.system"),
        ("k = 1\n", 'k = 1\nsevere_slices = ["ok", "bad\\u0085"]\n', "severe_slices[1]"),
    ],
)
def test_policy_refuses_control_characters_in_names(old: str, new: str, key: str) -> None:
    text = policy_text(RULE)
    assert old in text
    text = text.replace(old, new, 1)
    [problem] = _problems(text)
    assert f": key '{key}': control character U+" in problem
    assert problem.endswith("(names are one line of visible text)")
    line = _line_of(text, new.strip().splitlines()[-1])
    assert problem.startswith(f"p.toml:{line}: ")


def test_a_name_longer_than_the_limit_is_refused() -> None:
    text = policy_text(RULE).replace('name = "not worse"', f'name = "{"n" * (NAME_MAX_CHARS + 1)}"')
    [problem] = _problems(text)
    assert problem.endswith(f"key 'rules[0].name': {NAME_MAX_CHARS + 1} characters is longer than the limit of 1024")
    ok = policy_text(RULE).replace('name = "not worse"', 'name = "ünïcode ✓ — names\u202e stay"')
    assert parse_policy(ok.encode()).rules[0].name == "ünïcode ✓ — names\u202e stay"


@pytest.fixture
def deep_policy(tmp_path: Path) -> Path:
    path = tmp_path / "deep.toml"
    path.write_text(policy_text(RULE) + "deep = " + "[" * 700 + "]" * 700 + "\n", encoding="utf-8")
    return path


def _assert_refused(result: Result, path: Path) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "RecursionError" not in result.output
    assert f"{path}:" in result.output
    assert "key 'rules[0].deep': nested deeper than" in result.output


def test_policy_check_register_and_gate_refuse_a_deep_policy_with_exit_2(tmp_path: Path, deep_policy: Path) -> None:
    _assert_refused(CliRunner().invoke(app, ["policy", "check", str(deep_policy)]), deep_policy)
    empty = tmp_path / "rs"
    empty.mkdir()
    _assert_refused(CliRunner().invoke(app, ["policy", "register", str(deep_policy), str(empty)]), deep_policy)
    assert list(empty.iterdir()) == []  # nothing written
    outcomes = {f"c{i}": ["passed"] for i in range(10)}
    base = write_run_set(tmp_path / "base", system="baseline", outcomes=outcomes)
    cand = write_run_set(tmp_path / "cand", system="candidate", outcomes=outcomes)
    verdict = tmp_path / "v.json"
    args = ["gate", "--policy", str(deep_policy), "--baseline", str(base), "--candidate", str(cand), "-o", str(verdict)]
    _assert_refused(CliRunner().invoke(app, args), deep_policy)
    assert not verdict.exists()


def _old_locate(text: str) -> dict[tuple[str | int, ...], int]:
    """``toml_lines.locate`` before session 43, word for word (the oracle of the linear reading)."""
    found: dict[tuple[str | int, ...], int] = {}
    table: list[str | int] = []
    arrays: dict[tuple[str | int, ...], int] = {}
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = toml_lines._HEADER.match(line)
        if header and not toml_lines._ASSIGN.match(line):
            names: list[str | int] = list(toml_lines._split_key(header.group(2)))
            if header.group(1) == "[[":
                key = tuple(names)
                arrays[key] = arrays.get(key, -1) + 1
                table = [*names, arrays[key]]
            else:
                out: list[str | int] = []
                for name in names:
                    out.append(name)
                    prefix = tuple(n for n in out if isinstance(n, str))
                    if prefix in arrays:
                        out.append(arrays[prefix])
                table = out
            found.setdefault(tuple(table), number)
            continue
        assign = toml_lines._ASSIGN.match(line)
        if assign:
            path = (*table, *toml_lines._split_key(assign.group(1)))
            found.setdefault(path, number)
            rest = line[assign.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) == 1:
                    in_multiline = quote
    return found


_NAME = st.sampled_from(["rules", "judge", "a", "b", '"q.x"'])
_KEY = st.lists(_NAME, min_size=1, max_size=5).map(".".join)
_LINE = st.one_of(
    _KEY.map(lambda k: f"[{k}]"),
    _KEY.map(lambda k: f"[[{k}]]"),
    _KEY.map(lambda k: f"{k} = 1"),
    _KEY.map(lambda k: f'{k} = """'),
    st.just('end """'),
    st.just("# [a] comment"),
    st.just(""),
)


@given(st.lists(_LINE, max_size=30))
@settings(max_examples=examples(300))
def test_locate_reads_every_path_and_line_as_it_did_before(lines: list[str]) -> None:
    # Session 43 made the reading linear (a header's prefixes looked up only up to the longest array header;
    # too_deep stops at the first path over its limit); the paths and lines must not move.
    text = "\n".join(lines) + "\n"
    assert toml_lines.locate(text) == _old_locate(text)
    old = next(((line, path) for path, line in _old_locate(text).items() if len(path) > 3), None)
    found = toml_lines.too_deep(text, 3)
    if old is not None:
        assert found == old


class _CountingArrays(dict[tuple[str | int, ...], int]):
    """An array-of-tables index that counts the names of every prefix looked up."""

    looked_up = 0

    def get(self, key: tuple[str | int, ...], default: object = None) -> object:  # type: ignore[override]
        self.looked_up += len(key)
        return super().get(key, default)


def test_a_deep_header_costs_its_names_not_their_square() -> None:
    # A 1 MiB policy of one header of ~500,000 dotted names took hours to refuse before session 43 (O(n²) prefixes
    # looked up); now the prefixes past the longest array-of-tables header (here 2 names) are not looked up.
    arrays = _CountingArrays({("rules",): 0, ("rules", "judge"): 1})
    names: list[str | int] = ["rules", "judge", *["a"] * 10_000]
    assert toml_lines._with_indices(names, arrays, 2) == ["rules", 0, "judge", 1, *["a"] * 10_000]
    assert arrays.looked_up == 1 + 2


def test_a_policy_of_one_header_of_half_a_million_names_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "deep-header.toml"
    names = (POLICY_MAX_BYTES - 100) // 2
    path.write_text("[" + ".".join(["a"] * names) + "]\nx = 1\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["policy", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:1: key 'a.a.a." in result.output
    assert result.output.rstrip().endswith(
        f"nested deeper than {TOML_MAX_DEPTH} levels (arrays, inline tables or dotted keys)"
    )


#: The header pattern before session 43 (the oracle): it trimmed the name's spaces with ``\s*`` on both sides of a
#: lazy name, and backtracked in cubic time on ``[`` followed by many spaces and no ``]``.
_OLD_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)\s*(#.*)?$")


@given(st.text(alphabet="[] \t\u3000a.\"'#=x", max_size=14))
@settings(max_examples=examples(2000))
def test_a_header_line_is_read_as_the_old_pattern_read_it(line: str) -> None:
    old, new = _OLD_HEADER.match(line), toml_lines._HEADER.match(line)
    assert (old is None) == (new is None)
    if old is not None and new is not None:
        assert old.group(1) == new.group(1)
        assert toml_lines._split_key(old.group(2)) == toml_lines._split_key(new.group(2))


def test_a_line_of_an_open_bracket_and_a_million_spaces_is_read_in_linear_time(tmp_path: Path) -> None:
    # The old header pattern took 11 s on 2,000 spaces (cubic): a 1 MiB policy of this one line would never be refused.
    # Run in a child with a deadline 100 times what it takes (0.1 s), so a pattern that backtracks again fails here.
    script = (
        "from gatestats.io.toml_lines import too_deep\n"
        "assert too_deep('[' + ' ' * 1_000_000 + 'x\\n', 32) is None\n"
        "assert too_deep('[a' + ' ' * 1_000_000 + ']]x\\n', 32) is None\n"
    )
    passes_within(script)
