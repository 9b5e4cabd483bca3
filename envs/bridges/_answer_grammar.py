"""Replies parsed as data before a third-party scorer sees them (private).

Some reasoning-gym scorers run the model's answer as code: ``eval(answer)`` to read a Python list
(``binary_matrix``, ``n_queens``, ``spiral_matrix``, ``string_insertion``) or
``sympy.parse_expr(answer)`` to read an expression (``countdown``, ``puzzle24``,
``polynomial_multiplication``, ``simple_integration``, ``intermediate_integration``); both
execute arbitrary Python (``parse_expr`` ends in ``eval`` too, and emptying ``__builtins__`` does
not help: sympy re-sympifies strings in its own namespace). The bridge never hands such a scorer
text it has not first parsed with Python's own parser (``ast.parse``, which runs nothing) and
checked against a small grammar:

* ``"literal"``: a Python literal (``ast.literal_eval``'s grammar: numbers, strings, lists,
  tuples, dicts, sets), a bare name, or text that is not Python at all (``"1 2\\n3 4"``, the
  tasks' own format). Text that does not parse is safe to hand on: ``eval`` compiles with the
  same parser and fails before running anything. A call, an attribute, a lambda, a comprehension,
  an operator... is code, not an answer: an invalid reply.
* ``"arithmetic"``: numbers, ``+ - * / **`` and parentheses.
* ``"polynomial"``: the same plus the problem's variable names.
* ``"integral"``: the same plus the variable, the constant ``C``, ``E``, ``pi`` and the
  elementary functions (``sin``, ``exp``, ``sqrt``, ...).

Expression grammars also bound the work: every exponent must be a constant of at most
:data:`MAX_EXPONENT` in size (``9**9**9`` is refused), the estimated size of any number the
expression builds is at most :data:`MAX_DIGITS` digits, and an answer has at most
:data:`MAX_NODES` syntax nodes. What passes is handed on as the reply's own text (stripped), so
the scorer's verdict on honest answers is unchanged, including its exact-match checks.

Example:
    >>> check_answer("literal", "[[0, 1], [1, 0]]")
    '[[0, 1], [1, 0]]'
    >>> check_answer("arithmetic", "25*4 - (3 + 1)")
    '25*4 - (3 + 1)'
    >>> try:
    ...     check_answer("arithmetic", "__import__('os').system('ls')")
    ... except AnswerGrammarError as error:
    ...     print(error)
    the answer calls a function; write a plain expression with numbers, + - * / ** and parentheses
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from fractions import Fraction

__all__ = [
    "GRAMMARS",
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "MAX_NODES",
    "AnswerGrammarError",
    "check_answer",
]

GRAMMARS = ("literal", "arithmetic", "polynomial", "integral")
"""The answer grammars: see the module docstring."""

MAX_EXPONENT = 1000
"""The largest exponent (in absolute value) an expression answer may use."""

MAX_DIGITS = 10_000
"""The largest number (in decimal digits, estimated) an expression answer may build."""

MAX_NODES = 2_000
"""The most syntax nodes an expression answer may have."""

_FUNCTIONS = frozenset(
    [
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "asin",
        "acos",
        "atan",
        "acot",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "exp",
        "log",
        "ln",
        "sqrt",
        "Abs",
    ]
)
_CONSTANTS = frozenset({"E", "pi"})
_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_UNARY = (ast.UAdd, ast.USub)


class AnswerGrammarError(ValueError):
    """The answer is outside its task's grammar (the message says why and what to send)."""


def _describe(node: ast.AST) -> str:
    """A few words on a syntax node, for feedback the model can act on."""
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        return f"calls {name}" if name else "calls a function"
    words = {
        ast.Attribute: "uses an attribute (a.b)",
        ast.Subscript: "uses indexing (a[b])",
        ast.Lambda: "defines a lambda",
        ast.NamedExpr: "assigns a name",
        ast.JoinedStr: "is an f-string",
        ast.Starred: "uses *unpacking",
        ast.Await: "awaits",
        ast.Yield: "yields",
        ast.IfExp: "uses a conditional expression",
        ast.Compare: "uses a comparison",
        ast.BoolOp: "uses and/or",
    }
    for kind, text in words.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "is a comprehension"
    if isinstance(node, ast.BinOp):
        return f"uses the operator {type(node.op).__name__}"
    return f"contains a {type(node).__name__}"


def _parse(text: str) -> ast.expr | None:
    """The expression ``eval(text)`` would compile, or ``None`` when it does not compile.

    ``eval`` strips leading spaces and tabs before compiling a string; so does this, so the two
    always agree on what the text is.
    """
    try:
        return ast.parse(text.lstrip(" \t"), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _check_literal(text: str) -> None:
    tree = _parse(text)
    if tree is None or isinstance(tree, ast.Name):
        return  # not Python (eval fails to compile it), or one name (eval only looks it up)
    try:
        ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        code = next((n for n in ast.walk(tree) if not _is_literal_node(n)), tree)
        raise AnswerGrammarError(
            f"the answer {_describe(code)}; answer with plain data: the format the question "
            "asks for, or a list literal such as [[1, 2], [3, 4]]"
        ) from None


def _is_literal_node(node: ast.AST) -> bool:
    literal = (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.Load)
    return isinstance(node, (*literal, ast.unaryop))


def _number(node: ast.expr) -> int | float | None:
    """The int or float a constant node holds; None for any other node or constant.

    ``True`` and ``False`` are ints to Python but words in an answer, so they are not numbers here.
    """
    if not isinstance(node, ast.Constant):
        return None
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _exponent(node: ast.expr) -> Fraction:
    """The value of a constant exponent (numbers, + - * / and parentheses only)."""
    number = _number(node)
    if number is not None:
        if isinstance(number, float) and not math.isfinite(number):
            raise AnswerGrammarError("an exponent is not a finite number")
        return Fraction(number)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
        value = _exponent(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _exponent(node.left), _exponent(node.right)
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise AnswerGrammarError("an exponent divides by zero")
            return left / right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left + right if isinstance(node.op, ast.Add) else left - right
    raise AnswerGrammarError(
        "every exponent must be a constant number, like x**3 or (2*x)**(3/2), not an expression"
    )


class _ExpressionChecker:
    """Walks an expression answer, refusing any node outside the grammar; returns digit sizes."""

    def __init__(self, names: Iterable[str], functions: Iterable[str]) -> None:
        self.names, self.functions = frozenset(names), frozenset(functions)

    def digits(self, node: ast.expr) -> float:
        """An upper estimate of the decimal digits of the number ``node`` builds."""
        if isinstance(node, ast.Constant):
            number = _number(node)
            if number is None:
                raise AnswerGrammarError(
                    f"the answer contains {node.value!r}, which is not a number"
                )
            return len(str(abs(number)))
        if isinstance(node, ast.Name):
            if node.id in self.names or node.id in _CONSTANTS & self.functions:
                return 1.0
            allowed = ", ".join(sorted(self.names)) or "none"
            raise AnswerGrammarError(
                f"the answer uses the name {node.id!r} (allowed names: {allowed})"
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
            return self.digits(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _BINARY):
            left = self.digits(node.left)
            if isinstance(node.op, ast.Pow):
                exponent = abs(_exponent(node.right))
                if exponent > MAX_EXPONENT:
                    raise AnswerGrammarError(f"an exponent is larger than {MAX_EXPONENT}")
                return max(left, 1.0) * max(float(exponent), 1.0)
            right = self.digits(node.right)
            return (
                left + right if isinstance(node.op, (ast.Mult, ast.Div)) else max(left, right) + 1
            )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in self.functions
            and not node.keywords
            and 1 <= len(node.args) <= 2
        ):
            return max(self.digits(argument) for argument in node.args)
        raise AnswerGrammarError(
            f"the answer {_describe(node)}; write a plain expression with numbers, "
            "+ - * / ** and parentheses" + (" and the allowed functions" if self.functions else "")
        )


def check_answer(grammar: str, text: str, *, names: Iterable[str] = ()) -> str:
    """Check an answer against its task's grammar and return what the scorer may see.

    Args:
        grammar: One of :data:`GRAMMARS`.
        text: The extracted answer (already stripped of tags and surrounding whitespace).
        names: Variable names the expression may use (``"polynomial"`` and ``"integral"``).

    Returns:
        ``text`` stripped: the scorer's verdict on it is the same as on the original.

    Raises:
        AnswerGrammarError: The answer is outside the grammar; the message is in-band feedback.

    Example:
        >>> check_answer("integral", "-x**3*cos(x) + C", names=["x", "C"])
        '-x**3*cos(x) + C'
        >>> try:
        ...     check_answer("arithmetic", "9**9**9")
        ... except AnswerGrammarError as error:
        ...     print(error)
        every exponent must be a constant number, like x**3 or (2*x)**(3/2), not an expression
    """
    text = text.strip()
    if grammar == "literal":
        _check_literal(text)
        return text
    if grammar not in GRAMMARS:
        raise ValueError(f"unknown answer grammar {grammar!r}; one of {GRAMMARS}")
    tree = _parse(text)
    if tree is None:
        raise AnswerGrammarError(
            "the answer is not a well-formed expression; use numbers, + - * / ** and "
            "parentheses (for example 3*(4 + 2))"
        )
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise AnswerGrammarError(f"the expression is too long ({nodes} parts, at most {MAX_NODES})")
    allowed_names = frozenset(names) if grammar != "arithmetic" else frozenset()
    functions = _FUNCTIONS | _CONSTANTS if grammar == "integral" else frozenset()
    try:
        digits = _ExpressionChecker(allowed_names, functions).digits(tree)
    except RecursionError:
        raise AnswerGrammarError("the expression is nested too deeply") from None
    if digits > MAX_DIGITS:
        raise AnswerGrammarError(
            f"the expression builds a number of about {digits:.0f} digits (at most {MAX_DIGITS})"
        )
    return text
