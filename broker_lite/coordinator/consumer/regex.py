"""Subscriptions by regular expression, matched by the broker as Kafka matches them: with RE2J
(KIP-848, "Regular expressions"), a whole topic name against the whole pattern.

Python's :mod:`re` is a backtracking engine with a syntax of its own; RE2J guarantees linear time
and leaves out what needs backtracking. A pattern is accepted only when both engines read it the
same way, so a subscription never matches other topics here than on Kafka:

========================================  ==================  ====================================
construct                                 RE2J                here
========================================  ==================  ====================================
backreferences ``\\1``, ``(?P=name)``       refused             refused (INVALID_REGULAR_EXPRESSION)
lookaround ``(?=`` ``(?!`` ``(?<=``        refused             refused
``(?<!``, conditionals ``(?(``,
atomic groups ``(?>``
possessive quantifiers ``a*+``             refused             refused (Python 3.11 has them)
``\\Z`` (end of text)                      refused             refused
``\\z`` (end of text)                      accepted            read as Python's ``\\Z``
``\\Q...\\E`` (quoted text)                 accepted            the text, escaped
``\\p{Greek}``, ``\\pL`` (Unicode classes)  accepted            refused: :mod:`re` has none
``[[:alpha:]]`` (POSIX classes)           accepted            refused: :mod:`re` reads another set
flags ``(?U)`` (ungreedy)                 accepted            refused: :mod:`re` has none
``\\w``, ``\\d``, ``\\s``, ``\\b``           ASCII only          ASCII only (``re.ASCII``)
========================================  ==================  ====================================

Kafka matches with ``Pattern.matcher(topic).matches()``: the whole name, so a pattern here is
used with :func:`re.fullmatch`. Topic names are ASCII (``[a-zA-Z0-9._-]``), where the
remaining differences of the two engines (Unicode case folding, ``.`` and line terminators) do
not arise.

>>> compile_subscription("orders-.*").fullmatch("orders-eu") is not None
True
>>> compile_subscription(r"\\Qa.b\\E").fullmatch("axb") is None
True
>>> try:
...     compile_subscription("(?=orders).*")
... except InvalidRegularExpression as exc:
...     print(exc)
lookaround is not supported by RE2J: '(?=orders).*'
"""

from __future__ import annotations

import functools
import re

__all__ = ["InvalidRegularExpression", "compile_subscription"]


class InvalidRegularExpression(ValueError):
    """A subscription's pattern that RE2J would refuse, or that :mod:`re` would read otherwise
    (Kafka's INVALID_REGULAR_EXPRESSION)."""


# (what the pattern contains, why it is refused)
_REFUSED = (
    (re.compile(r"\\[1-9]|\(\?P="), "backreferences are not supported by RE2J"),
    (re.compile(r"\(\?<?[=!]"), "lookaround is not supported by RE2J"),
    (re.compile(r"\(\?\("), "conditionals are not supported by RE2J"),
    (re.compile(r"\(\?>"), "atomic groups are not supported by RE2J"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers are not supported by RE2J"),
    (re.compile(r"\\Z"), "\\Z is not supported by RE2J (use \\z)"),
    (re.compile(r"\\[pP]"), "Unicode classes (\\p) cannot be matched the same way here"),
    (re.compile(r"\[\[?:"), "POSIX classes ([:alpha:]) cannot be matched the same way here"),
    (re.compile(r"\(\?[a-zA-Z]*U"), "the ungreedy flag (?U) cannot be matched the same way "
                                    "here"),
)


def _unquote(pattern: str) -> str:
    """``\\Q...\\E`` spans as escaped text (an unterminated ``\\Q`` runs to the end)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("\\\\", i):
            out.append("\\\\")
            i += 2
        elif pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            end = len(pattern) if end < 0 else end
            out.append(re.escape(pattern[i + 2:end]))
            i = end + 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _without_escaped_backslashes(pattern: str) -> str:
    return pattern.replace("\\\\", "")


@functools.lru_cache(maxsize=256)
def compile_subscription(pattern: str) -> re.Pattern[str]:
    """The compiled form of a subscription's pattern; raises
    :class:`InvalidRegularExpression`."""
    if not pattern:
        raise InvalidRegularExpression("an empty regular expression")
    unquoted = _unquote(pattern)
    checked = _without_escaped_backslashes(unquoted)
    for construct, why in _REFUSED:
        if construct.search(checked):
            raise InvalidRegularExpression(f"{why}: {pattern!r}")
    translated = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", unquoted)
    try:
        return re.compile(translated, re.ASCII)
    except re.error as exc:
        raise InvalidRegularExpression(f"{exc}: {pattern!r}") from None
