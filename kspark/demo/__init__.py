"""``kpy demo``: the whole stack on one machine, end to end, checked.

ZooKeeper and broker_lite start in-process; sample page views (:mod:`.generator`) stream into
the topic ``page-views`` in the background (:mod:`.feed`); a Spark Structured Streaming query
(:mod:`.pipeline`) reads them with ``format("kpy")``, counts views per page per one-minute
event-time window, and writes the counts to ``page-view-counts`` with ``format("kpy")``,
exactly once; progress shows while it runs (:mod:`.progress`, :mod:`.batches`, :mod:`.lag`);
at the end the output is read back and compared with counts computed without Spark
(:mod:`.aggregates`, :mod:`.verify`), and a summary printed (:mod:`.summary`). :mod:`.run`
ties the steps together and shuts everything down, also on Ctrl-C (:mod:`.signals`).
"""

from .run import Settings, run_demo

__all__ = ["Settings", "run_demo"]
