"""Subscription patterns: what RE2J and Python's re read alike is matched as Kafka matches it
(the whole topic name); what either would read otherwise is refused."""

import pytest

from broker_lite.coordinator.consumer.regex import (
    InvalidRegularExpression,
    compile_subscription,
)


@pytest.mark.parametrize("pattern, topic, matches", [
    ("orders.*", "orders-eu", True),
    ("orders", "orders-eu", False),  # the whole name, as Pattern.matches()
    ("^orders-(eu|us)$", "orders-us", True),
    (r"orders\z", "orders", True),  # RE2J's end of text
    (r"\Qa.b\E", "a.b", True),  # quoted text
    (r"\Qa.b\E", "axb", False),
    (r"a\\Qb", "a\\Qb", True),  # an escaped backslash is no quote
    (r"t\w+", "t_é", False),  # \w is ASCII, as in RE2J
    ("[a-c]+-[0-9]{2}", "abc-42", True),
])
def test_matching(pattern, topic, matches):
    assert (compile_subscription(pattern).fullmatch(topic) is not None) is matches


@pytest.mark.parametrize("pattern", [
    "", "(a)\\1", "(?P<x>a)(?P=x)", "(?=a)a", "(?!a)b", "(?<=a)b", "(?<!a)b", "(?(1)a|b)",
    "(?>a)", "a*+", "a++", "a?+", "a{2}+", r"a\Z", r"\pL", r"\p{Greek}", "[[:alpha:]]",
    "(?U)a*", "(", "a{2,1}",
])
def test_refused(pattern):
    with pytest.raises(InvalidRegularExpression):
        compile_subscription(pattern)
