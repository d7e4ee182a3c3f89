"""A clock that a test moves by hand, for the code that takes ``clock`` (a callable giving
milliseconds since the epoch, as :func:`broker_lite.common.vocabulary.now_ms` does)."""

#: A fixed "now" (2023-11-14), far from the epoch, so timestamps look like real ones.
NOW = 1_700_000_000_000


class ManualClock:
    """``clock()`` is ``clock.now``, which only the test changes."""

    def __init__(self, now: int = NOW):
        self.now = now

    def __call__(self) -> int:
        return self.now
