"""MkDocs hooks and a griffe extension for the trl-env docs (both wired up in ``mkdocs.yml``).

* :class:`DocstringFixes` (a griffe extension, ``extensions:`` of the mkdocstrings handler):
  the docstrings follow Google style but head their doctests ``Example:``, which griffe reads as
  a generic admonition (so ``>>>`` lines would render as Markdown quotes); it renames the heading
  to ``Examples:`` so they render as highlighted code. It also documents a dataclass field
  declared TRL-style, ``field(..., metadata={"help": "..."})``, with its help text.
* :func:`on_page_content` (an MkDocs hook, ``hooks:``): the docstrings use Sphinx-style roles (``:class:`trl_env.protocol.Env```), which mkdocstrings renders
literally. This hook turns each one into an optional cross-reference: a link when the target is
documented on the site (for example ``trl_env.TextSpace``), plain code otherwise (a relative name
like ``Env.reset``, or an object of another library). ``~`` shortens the text to the last part,
as in Sphinx.
"""

from __future__ import annotations

import ast
import html
import re
from typing import Any

import griffe

_EXAMPLE_HEADING = re.compile(r"^(?P<indent>[ \t]*)Example:[ \t]*$", flags=re.MULTILINE)

_ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|type):<code>(?P<target>[^<]+)</code>"
)


def _field_help(value: object) -> str | None:
    """The ``help`` of ``field(..., metadata={"help": ...})`` source text, if that is what it is."""
    try:
        call = ast.parse(str(value), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "field"):
        return None
    for keyword in call.keywords:
        if keyword.arg == "metadata" and isinstance(keyword.value, ast.Dict):
            for key, item in zip(keyword.value.keys, keyword.value.values, strict=True):
                is_help = isinstance(key, ast.Constant) and key.value == "help"
                if is_help and isinstance(item, ast.Constant) and isinstance(item.value, str):
                    return item.value
    return None


class DocstringFixes(griffe.Extension):
    """Rename ``Example:`` sections to ``Examples:``; document ``field(metadata={"help"})``."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Fix the docstring of every loaded object (before it is parsed)."""
        help_text = _field_help(obj.value) if obj.is_attribute and obj.value is not None else None
        if obj.docstring is None and help_text is not None:
            obj.docstring = griffe.Docstring(help_text, parent=obj)
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE_HEADING.sub(r"\g<indent>Examples:", obj.docstring.value)


def _autoref(match: re.Match[str]) -> str:
    target = html.unescape(match["target"]).strip()
    short = target.startswith("~")
    target = target.lstrip("~.")
    if target.endswith("()"):
        target = target[:-2]
    text = target.rsplit(".", 1)[-1] if short else target
    return (
        f'<autoref identifier="{html.escape(target)}" optional>'
        f"<code>{html.escape(text)}</code></autoref>"
    )


def on_page_content(html_text: str, **kwargs: Any) -> str:
    """Replace Sphinx roles left in rendered docstrings by optional autorefs."""
    return _ROLE.sub(_autoref, html_text)
