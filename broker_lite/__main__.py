"""``python -m broker_lite ...``: the ``broker-lite`` command (:mod:`broker_lite.cli`)."""

import sys

from broker_lite.cli import main

if __name__ == "__main__":
    sys.exit(main())
