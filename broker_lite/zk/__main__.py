"""``python -m broker_lite.zk zookeeper.properties``: see :mod:`broker_lite.zk.standalone`."""

import sys

from .standalone import main

sys.exit(main())
