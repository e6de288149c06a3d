"""Large, inert HTML fragments kept out of the kernel and the export, and put back into the finished page.

A page's large tables (a release report's flips at 10M records: ~100 MB of HTML) need not go to
the kernel as a parameter, be displayed, come back, be parsed and re-serialised by nbconvert's
BeautifulSoup pass (``HTMLExporter.from_notebook_node``: alt texts, ``tabindex``) and parsed again by
:func:`~gatestats.report.quarto._html.find_network_references`. :func:`hold_out` gives the kernel a
placeholder for each fragment that is *inert* (:func:`inert_problem` is ``None``), and the Jupyter
renderer puts the fragment in place of its placeholder after the export and after the network check
(``render_qmd(..., spliced=...)``). The page is the same byte for byte, because for an inert fragment:

- the BeautifulSoup pass (``html.parser``, the ``minimal`` formatter) gives back the same text: a
  strict subset of HTML, read by a tokenizer here (no HTML parser): balanced tags from an allow-list
  (no raw-text or whitespace-preserving element: no ``script``, ``style``, ``pre``, ``textarea``,
  ``title``), lower-case names, each attribute once, in sorted order (the formatter sorts them),
  double-quoted, from an allow-list; text and
  values without ``<``, ``>``, a carriage return or NUL, and with ``&`` only in ``&amp;``, ``&lt;``,
  ``&gt;`` (what the formatter writes back); a text of ASCII white space only is one space or one
  newline (BeautifulSoup collapses longer ones); ``class`` values single-spaced; void elements
  written ``<br/>``, other elements never self-closed; the fragment starts with a tag and ends
  with one (its first and last texts do not merge with the page's);
- nbconvert's selectors touch nothing in it (no ``img``; no class starting with ``jp-``);
- :func:`find_network_references` finds nothing in it (no fetching element, no ``style``; ``href``
  on ``a`` only, which is not a fetch), and the placeholder was seen as a ``div`` outside any
  ``script`` or ``style`` (checked by the renderer, as it is that each placeholder is found once).

``tests/report/test_splice.py`` checks the claims on random fragments against BeautifulSoup itself.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["PLACEHOLDER", "HeldOut", "hold_out", "inert_problem", "splice"]

#: What a placeholder looks like (``<div id="gs-splice-<32 hex digits>-<n>"></div>``).
PLACEHOLDER: Final = re.compile(r'<div id="(gs-splice-[0-9a-f]{32}-[0-9]+)"></div>')

#: Elements an inert fragment may hold (none fetches, none is raw text or keeps its white space).
ELEMENTS: Final = frozenset(
    {
        *("p", "div", "span", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption"),
        *("code", "strong", "em", "b", "i", "small", "sub", "sup", "abbr", "kbd", "mark", "s", "u"),
        *("ul", "ol", "li", "dl", "dt", "dd", "details", "summary", "blockquote", "a"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "section", "header", "footer", "figure", "figcaption"),
    }
)
#: Void elements an inert fragment may hold, written ``<br/>``.
VOID: Final = frozenset({"br", "wbr", "hr"})
#: Attributes an inert fragment may carry (and ``data-*``, ``aria-*``; ``href`` on ``a`` only).
ATTRIBUTES: Final = frozenset({"class", "id", "title", "colspan", "rowspan", "scope", "lang", "dir", "role", "abbr"})

_NOT_TEXT = "<>&\r\x00"
_VALUE = r'[^"<>&\x00-\x1f\x7f]*(?:&(?:amp|lt|gt);[^"<>&\x00-\x1f\x7f]*)*'
_TOKEN = re.compile(
    r"<(?:/(?P<end>[a-z][a-z0-9]*)"
    rf'|(?P<start>[a-z][a-z0-9]*)(?P<attrs>(?: [a-z][a-z0-9-]*="{_VALUE}")*)(?P<void>/)?)>'
    rf"|(?P<text>(?:[^{_NOT_TEXT}]+|&(?:amp|lt|gt);)+)"
)
_ATTR = re.compile(r' ([a-z][a-z0-9-]*)="([^"]*)"')
_CLASS = re.compile(r"\S+(?: \S+)*")
_ASCII_SPACE = " \n\t\x0c\r"


def _attrs_problem(tag: str, attrs: str) -> str | None:
    last = ""
    for name, value in _ATTR.findall(attrs):
        if name <= last:  # the formatter writes them sorted (bs4.formatter.Formatter.attributes)
            return f"attribute {name!r} twice or not in sorted order"
        last = name
        if name == "href" and tag == "a":
            continue
        if name not in ATTRIBUTES and not name.startswith(("data-", "aria-")):
            return f"attribute {name!r} not allowed"
        if name == "class" and (
            _CLASS.fullmatch(value) is None or any(c.lower().startswith("jp-") for c in value.split(" "))
        ):
            return f"class {value!r} not single-spaced or a jp- class"
    return None


def _text_problem(text: str) -> str | None:
    if text in (" ", "\n") or text.strip(_ASCII_SPACE):
        return None
    return "a text of white space only other than one space or one newline"


def _end_problem(name: str, stack: list[str]) -> str | None:
    if not stack or stack[-1] != name:
        return f"</{name}> does not close the open element"
    stack.pop()
    return None


def _token_problem(m: re.Match[str], stack: list[str], checked: dict[str, str | None]) -> str | None:
    """Why the token ``m`` breaks the inert subset, given the open elements ``stack`` (updated)."""
    kind = m.lastgroup
    if kind == "text":
        return _text_problem(m.group("text"))
    if kind == "end":
        return _end_problem(m.group("end"), stack)
    name = m.group("start")
    void = m.group("void") is not None
    if void != (name in VOID) or (not void and name not in ELEMENTS):
        return f"element <{name}{'/' if void else ''}> not allowed"
    attrs = m.group("attrs")
    if attrs:
        key = name + attrs
        problem = checked[key] if key in checked else checked.setdefault(key, _attrs_problem(name, attrs))
        if problem is not None:
            return problem
    if not void:
        stack.append(name)
    return None


def inert_problem(fragment: str) -> str | None:
    """Why ``fragment`` is not inert (see the module docstring), or ``None`` when it is.

    Parameters
    ----------
    fragment
        HTML text.

    Returns
    -------
    str or None
        The first problem and its character offset; ``None``: inert.

    Examples
    --------
    >>> inert_problem('<p class="x">a &amp; b</p>') is None
    True
    >>> inert_problem("<p>a &quot;b&quot;</p>")
    "at 5: not a tag or text of the inert subset: '&quot;b&quot;</p>'"
    """
    if not fragment.startswith("<") or not fragment.endswith(">"):
        return "at 0: does not start and end with a tag"
    stack: list[str] = []
    checked: dict[str, str | None] = {}
    pos = 0
    for m in _TOKEN.finditer(fragment):
        if m.start() != pos:
            break
        pos = m.end()
        problem = _token_problem(m, stack, checked)
        if problem is not None:
            return f"at {m.start()}: {problem}"
    if pos != len(fragment):
        return f"at {pos}: not a tag or text of the inert subset: {fragment[pos : pos + 20]!r}"
    if stack:
        return f"at {len(fragment)}: <{stack[-1]}> is not closed"
    return None


@dataclass(frozen=True, slots=True)
class HeldOut:
    """Fragments held out of a render: ``placeholder -> inert HTML``, made only by :func:`hold_out`."""

    fragments: Mapping[str, str]


def hold_out(parts: Mapping[str, str]) -> tuple[dict[str, str], HeldOut]:
    """Each inert part replaced by a new placeholder; the parts as shown and what was held out.

    Parameters
    ----------
    parts
        ``name -> HTML`` (a page's sections).

    Returns
    -------
    tuple
        ``name -> HTML or placeholder`` (what the kernel shows) and the :class:`HeldOut` fragments
        to pass to ``render_qmd(..., spliced=...)``. A part that is not inert is left as it is.
    """
    token = secrets.token_hex(16)
    shown: dict[str, str] = {}
    held: dict[str, str] = {}
    for n, (name, html) in enumerate(parts.items()):
        if inert_problem(html) is None:
            placeholder = f'<div id="gs-splice-{token}-{n}"></div>'
            shown[name] = placeholder
            held[placeholder] = html
        else:
            shown[name] = html
    return shown, HeldOut(fragments=held)


def splice(page: str, held: HeldOut) -> str:
    """``page`` with each placeholder replaced by its fragment.

    Parameters
    ----------
    page
        The exported page, holding the placeholders :func:`hold_out` made.
    held
        The fragments held out, by placeholder.

    Returns
    -------
    str
        The page with every fragment in place of its placeholder.

    Raises
    ------
    ValueError
        A placeholder is missing from ``page`` or found more than once.
    """
    fragments = held.fragments
    if not fragments:
        return page
    seen: list[str] = []

    def put(match: re.Match[str]) -> str:
        placeholder = match.group(0)
        if placeholder not in fragments:
            return placeholder
        seen.append(placeholder)
        return fragments[placeholder]

    out = PLACEHOLDER.sub(put, page)
    if sorted(seen) != sorted(fragments):
        missing = sorted(set(fragments) - set(seen)) or sorted({p for p in seen if seen.count(p) > 1})
        msg = f"the page does not hold each placeholder exactly once: {', '.join(missing[:3])}"
        raise ValueError(msg)
    return out
