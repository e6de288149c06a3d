"""Inert sections spliced into the exported page (``report/quarto/splicing.py``, issue 28 items 4-5).

The claim: for a fragment :func:`inert_problem` accepts, nbconvert's BeautifulSoup pass over a page
holding it gives back the page with the fragment unchanged, nbconvert's selectors do not touch it,
and :func:`find_network_references` finds nothing in it; so putting it in place of a placeholder
after the export gives the page the old way gave, byte for byte. Checked here against
BeautifulSoup itself on random fragments (built from the subset and from a wider HTML alphabet),
and on the release report built both ways.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.report import RenderError
from gatestats.report import release as release_module
from gatestats.report.quarto import charts as charts_module
from gatestats.report.quarto import splicing
from gatestats.report.quarto._html import _FETCHING_TAGS, find_network_references, network_scan
from gatestats.report.quarto.render import _refuse_network
from gatestats.report.quarto.splicing import ELEMENTS, VOID, HeldOut, hold_out, inert_problem, splice
from gatestats.report.release import build_release_report
from tests.hypothesis_counts import examples
from tests.report.conftest import ScenarioReport
from tests.report.drawn_once import DrawnOnce

#: Around the fragment: what nbconvert's template writes around an HTML output (after its pass).
BEFORE = (
    '<!DOCTYPE html>\n<html><head><style>p{color:red}</style></head><body class="jp-Notebook">\n'
    '<div class="jp-OutputArea-child"><div class="jp-RenderedHTMLCommon jp-OutputArea-output" '
    'data-mime-type="text/html">\n'
)
AFTER = "\n</div>\n</div>\n</body></html>"


def nbconvert_pass(page: str) -> str:
    """What ``HTMLExporter.from_notebook_node`` does to the page after the template (nbconvert 7)."""
    soup = BeautifulSoup(page, features="html.parser")
    for elem in soup.select("img:not([alt])"):
        elem.attrs["alt"] = "No description has been provided for this image"
    for elem in soup.select(".jp-Notebook div.jp-Cell-inputWrapper"):
        elem.attrs["tabindex"] = "0"
    for elem in soup.select(".jp-Notebook div.jp-OutputArea-output"):
        elem.attrs["tabindex"] = "0"
    return str(soup)


def minimal(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\x00"), max_size=12)
NAMES = sorted(ELEMENTS)
ATTRS = st.sampled_from(["class", "id", "title", "colspan", "data-x", "aria-label", "scope"])
VALUE = st.text(st.characters(codec="utf-8", exclude_categories=("Cc",), exclude_characters='"'), max_size=10)


@st.composite
def attrs(draw: st.DrawFn) -> str:
    names = sorted(draw(st.lists(ATTRS, max_size=3, unique=True)))
    out = ""
    for name in names:
        value = draw(VALUE)
        if name == "class":
            value = " ".join(value.split()) or "c"
        out += f' {name}="{minimal(value)}"'
    return out


@st.composite
def inert_tree(draw: st.DrawFn, depth: int = 3) -> str:
    """A fragment of the subset: elements of the allow-list, minimally escaped texts."""
    if draw(st.integers(0, 5)) == 0:
        return f"<{draw(st.sampled_from(sorted(VOID)))}{draw(attrs())}/>"
    name = draw(st.sampled_from(NAMES))
    inner = ""
    last_text = False  # two texts in a row are one text (one space + one space is not inert)
    for _ in range(draw(st.integers(0, 3 if depth else 0))):
        if draw(st.booleans()) and not last_text:
            text = draw(TEXT)
            inner += " " if text.strip(" \n\t\x0c") == "" and text else minimal(text)
            last_text = bool(text)
        else:
            inner += draw(inert_tree(depth - 1))
            last_text = False
    return f"<{name}{draw(attrs())}>{inner}</{name}>"


#: Tokens of a wider HTML: what the subset refuses (entities, void forms, raw text, fetching, white space).
WILD = st.lists(
    st.sampled_from(
        [
            "<p>",
            "</p>",
            "<div>",
            "</div>",
            "<td class='a'>",
            '<td class="a  b">',
            '<td class="jp-OutputArea-output">',
            "</td>",
            "<br>",
            "<br/>",
            "<div/>",
            "<img src=x.png>",
            '<img alt="a"/>',
            "<script>",
            "</script>",
            "<style>",
            "</style>",
            '<span style="x">',
            "</span>",
            '<a href="https://x.y/z">',
            "</a>",
            "<P>",
            "&quot;",
            "&amp;",
            "&lt;",
            "&nbsp;",
            "&",
            ">",
            '"',
            "'",
            " ",
            "  ",
            "\n",
            "\n\n",
            "\t",
            "x",
            "é",
            "<!-- c -->",
            '<code title="a&amp;b">',
            "</code>",
        ]
    ),
    max_size=14,
).map("".join)


#: A placeholder element as ``hold_out`` writes one (``splicing.PLACEHOLDER`` matches it).
ZERO_PLACEHOLDER = '<div id="gs-splice-' + "0" * 32 + '-0"></div>'


@functools.cache
def _around_placeholder() -> tuple[str, tuple[str, ...]]:
    """The page holding only :data:`ZERO_PLACEHOLDER` after nbconvert's pass, and its network references.

    The same for every fragment: made once, not once per example (issue 28, item 3).
    """
    with_placeholder = nbconvert_pass(BEFORE + ZERO_PLACEHOLDER + AFTER)
    assert with_placeholder.count(ZERO_PLACEHOLDER) == 1
    return with_placeholder, tuple(find_network_references(BEFORE + ZERO_PLACEHOLDER + AFTER))


def _identity_holds(fragment: str) -> None:
    page = BEFORE + fragment + AFTER
    with_placeholder, references = _around_placeholder()
    assert nbconvert_pass(page) == with_placeholder.replace(ZERO_PLACEHOLDER, fragment)
    assert find_network_references(fragment) == []
    assert tuple(find_network_references(page)) == references


@settings(max_examples=examples(300), deadline=None)
@given(inert_tree())
def test_an_inert_fragment_survives_nbconvert_s_pass_unchanged(fragment: str) -> None:
    assert inert_problem(fragment) is None, fragment
    _identity_holds(fragment)


@settings(max_examples=examples(600), deadline=None)
@given(WILD)
def test_whatever_the_subset_accepts_survives_nbconvert_s_pass(fragment: str) -> None:
    """From a wider alphabet: accepted ⇒ unchanged (the rejections are the other test's business)."""
    if inert_problem(fragment) is None:
        _identity_holds(fragment)


@pytest.mark.parametrize(
    ("fragment", "why"),
    [
        ("<p>a &quot;b&quot;</p>", "not a tag or text"),  # BeautifulSoup writes the quote back bare
        ("<p>a&nbsp;b</p>", "not a tag or text"),
        ("<p>a > b</p>", "not a tag or text"),
        ("<p>a\r\nb</p>", "not a tag or text"),
        ("<p>a<br>b</p>", "element <br> not allowed"),
        ("<div/>", "element <div/> not allowed"),
        ('<p><img alt="a"/></p>', "element <img/> not allowed"),
        ("<script>x</script>", "element <script> not allowed"),
        ("<pre>x</pre>", "element <pre> not allowed"),
        ('<span style="color:red">x</span>', "attribute 'style' not allowed"),
        ('<span src="x">x</span>', "attribute 'src' not allowed"),
        ('<span href="x">x</span>', "attribute 'href' not allowed"),
        ('<td class="a  b">x</td>', "not single-spaced"),
        ('<td class=" a">x</td>', "not single-spaced"),
        ('<div class="jp-Cell-inputWrapper">x</div>', "jp- class"),
        ('<td class="a" class="b">x</td>', "twice"),
        ('<td title="a" class="b">x</td>', "sorted order"),
        ("<td class='a'>x</td>", "not a tag or text"),
        ("<P>x</P>", "not a tag or text"),
        ("<p>x</div>", "does not close"),
        ("<p><b>x</p></b>", "does not close"),
        ("<p>x", "does not start and end"),
        ("<p>x</p><p>", "is not closed"),
        (" <p>x</p>", "does not start and end"),
        ("<p>x</p>  <p>y</p>", "white space only"),
        ("<p>x</p>\n\n<p>y</p>", "white space only"),
        ("<p><!-- c --></p>", "not a tag or text"),
    ],
)
def test_what_is_not_inert_is_named(fragment: str, why: str) -> None:
    problem = inert_problem(fragment)
    assert problem is not None
    assert why in problem


def test_the_subset_fetches_nothing() -> None:
    """No element of the allow-list is one ``find_network_references`` looks at."""
    assert not (ELEMENTS | VOID) & _FETCHING_TAGS
    assert not (ELEMENTS | VOID) & {"script", "style", "pre", "textarea", "title", "img"}


def test_hold_out_keeps_what_is_not_inert() -> None:
    shown, held = hold_out({"a": "<p>x</p>", "b": "<style>p{}</style><p>y</p>", "c": "<p>z</p>"})
    assert shown["b"] == "<style>p{}</style><p>y</p>"
    assert splicing.PLACEHOLDER.fullmatch(shown["a"])
    assert splicing.PLACEHOLDER.fullmatch(shown["c"])
    assert held.fragments == {shown["a"]: "<p>x</p>", shown["c"]: "<p>z</p>"}
    page = f"<body>{shown['a']}{shown['b']}{shown['c']}</body>"
    assert splice(page, held) == "<body><p>x</p><style>p{}</style><p>y</p><p>z</p></body>"


def test_a_placeholder_missing_twice_or_not_an_element_is_refused() -> None:
    shown, held = hold_out({"flips": "<p>x</p>"})
    placeholder = shown["flips"]
    ident = splicing.PLACEHOLDER.fullmatch(placeholder)[1]  # type: ignore[index]
    _refuse_network(f"<body>{placeholder}</body>", "r.qmd", held)  # once, as an element: accepted
    for page in (
        "<body></body>",
        f"<body>{placeholder}{placeholder}</body>",
        f"<body><script>var s = '{placeholder}';</script></body>",
        f'<body><p title="{html.escape(placeholder)}">x</p></body>',
        f"<body><style>/* {placeholder} */</style></body>",
    ):
        with pytest.raises(RenderError, match="placeholder exactly once"):
            _refuse_network(page, "r.qmd", held)
    assert network_scan(f"<script>{placeholder}</script>", frozenset({ident}))[1] == {ident: 0}
    with pytest.raises(ValueError, match="exactly once"):
        splice("<body></body>", held)
    with pytest.raises(RenderError, match="not a placeholder"):
        _refuse_network("<body></body>", "r.qmd", HeldOut(fragments={"<p>forged</p>": "<p>x</p>"}))


def test_the_report_is_the_same_spliced_or_not(
    scenario_report: ScenarioReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release report built with its inert sections spliced in and built the old way: the same bytes.

    And the kernel was given placeholders for them (its parameters do not carry the sections). The spliced
    report is the scenario's (tests/report/conftest.py: built once, with what ``render_qmd`` was given
    recorded the way this test's spy records the old way's).
    """
    seen: list[tuple[dict[str, str], HeldOut | None]] = []
    render = release_module.render_qmd

    def spy(*args: object, **kwargs: object) -> object:
        params = kwargs["params"]
        assert isinstance(params, dict)
        seen.append((dict(params["page"]["sections"]), kwargs.get("spliced")))  # type: ignore[arg-type]
        return render(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(release_module, "render_qmd", spy)
    spliced = scenario_report.report
    drawn = DrawnOnce(scenario_report.drawings)  # what the shared report's build had vl-convert draw
    monkeypatch.setattr(charts_module, "vl_convert", drawn.module)
    monkeypatch.setattr(release_module, "hold_out", lambda parts: (dict(parts), HeldOut(fragments={})))
    plain = build_release_report(scenario_report.verdict, out=tmp_path / "b", renderer="jupyter")
    assert spliced.html_path.read_bytes() == plain.html_path.read_bytes()
    assert len(scenario_report.drawings.svg) == len(scenario_report.drawings.png) == 4
    assert drawn.misses == 0  # the old way asked for exactly the drawings the spliced build made
    sections, held = scenario_report.sections, scenario_report.spliced
    assert held is not None
    assert splicing.PLACEHOLDER.fullmatch(sections["flips"])
    assert held.fragments[sections["flips"]].startswith("<p>A flip is a case")
    assert "<style>" in sections["verdict"]  # not inert: shown by the kernel as before
    assert "&#x27;" in sections["provenance"]  # html.escape's quotes: BeautifulSoup writes them bare
    assert len(held.fragments) >= 8  # flips, curves, slices, cost, infra, ...
    ((_, plain_held),) = seen
    assert plain_held == HeldOut(fragments={})


#: Case ids and slice names a hostile golden set may hold: markup, entities, backticks, U+2028 (all
#: escaped into the inert subset: the sections naming them are held out), then the same with quotes
#: (escaped as ``&quot;``/``&#x27;``, outside the subset: those sections go through the kernel).
_HOSTILE = ("<script>alert(1)</script>", "x &amp; y", "`rm -rf`|*_", "line\u2028sep", "é&<>", "zw\u200bj\u202eevil")
_QUOTED = (*_HOSTILE, "a\"b'c")


@pytest.mark.parametrize(("hostile", "held_out"), [(_HOSTILE, True), (_QUOTED, False)])
def test_hostile_ids_give_the_same_report_spliced_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile: tuple[str, ...], held_out: bool
) -> None:
    """Hostile case ids and slice names in the flips, slices and failures: the spliced report is the old
    report byte for byte, and neither carries their markup unescaped (held out or not, each section is
    what the kernel would have shown)."""
    from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
    from tests.gate.factory import policy_text, write_run_set
    from tests.report.test_release import EXTRA, NOW, RULES

    root = tmp_path / "gate"
    root.mkdir()
    (root / "policy.toml").write_text(policy_text(RULES, k=4, min_cases=10, min_trials=4, extra=EXTRA), "utf-8")
    policy = load_policy(root / "policy.toml")
    ids = [f"{hostile[i % len(hostile)]}-{i}" for i in range(24)]
    base = {c: ["failed"] * 4 if i % 3 == 0 else ["passed"] * 4 for i, c in enumerate(ids)}
    cand = {c: ["passed"] * 4 if i % 3 == 0 else ["passed", "failed", "passed", "passed"] for i, c in enumerate(ids)}
    slices = {c: [hostile[i % 3]] for i, c in enumerate(ids)}
    b = write_run_set(root / "base", system="baseline", outcomes=base, slices=slices, cost=0.02)
    c = write_run_set(root / "cand", system="candidate", outcomes=cand, slices=slices, policy=policy, cost=0.025)
    verdict = write_verdict(
        evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW), root / "verdict.json"
    )
    held: list[HeldOut] = []
    real_hold_out = release_module.hold_out

    def spy(parts: dict[str, str]) -> tuple[dict[str, str], HeldOut]:
        shown, out = real_hold_out(parts)
        held.append(out)
        return shown, out

    monkeypatch.setattr(release_module, "hold_out", spy)
    drawn = DrawnOnce()  # the old way's build draws nothing again: the same charts, asked for the same way
    monkeypatch.setattr(charts_module, "vl_convert", drawn.module)
    spliced = build_release_report(verdict, out=tmp_path / "a", renderer="jupyter").html_path.read_text("utf-8")
    misses = drawn.misses
    monkeypatch.setattr(release_module, "hold_out", lambda parts: (dict(parts), HeldOut(fragments={})))
    plain = build_release_report(verdict, out=tmp_path / "b", renderer="jupyter").html_path.read_text("utf-8")
    assert spliced == plain
    assert misses == 8  # 4 charts, an SVG and a PNG each, drawn by the first build
    assert drawn.misses == misses  # and none of them other for the old way
    assert held
    assert held[0].fragments  # some sections did go around the kernel
    assert "<script>alert(1)</script>" not in spliced
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in spliced  # the flips name the case, escaped
    flips = [f for f in held[0].fragments.values() if f.startswith("<p>A flip is a case")]
    assert len(flips) == int(held_out)  # the flips section went around the kernel only without quotes
    assert all("&lt;script&gt;alert(1)&lt;/script&gt;" in f for f in flips)
    # invisible characters are shown as the terminal shows them (gatestats.io.text.visible), never raw
    assert not {"\u2028", "\u200b", "\u202e"} & set(spliced)
    assert "line\\u2028sep" in spliced
    assert "zw\\u200bj\\u202eevil" in spliced
