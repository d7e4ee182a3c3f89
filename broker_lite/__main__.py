import sys

from broker_lite.cli import main

sys.exit(main())
