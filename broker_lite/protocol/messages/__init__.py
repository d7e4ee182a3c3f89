"""The schemas of the APIs broker_lite knows, one module per API family, as Python data.

Every declaration carries the full field list and version ranges of Kafka's JSON spec for that
message (every version of the spec, including ones the broker does not advertise); the test
``tests/broker_lite/protocol/test_spec_crosscheck.py`` checks them field by field against the
specs. Which versions the broker advertises is the server's business.
"""

from . import (
    acls,
    api_versions,
    configs,
    fetch,
    group_offsets,
    groups,
    headers,
    metadata,
    offsets,
    produce,
    producer_ids,
    producers,
    records_admin,
    replication,
    sasl,
    scram_credentials,
    topics,
    transactions,
)
from .acls import *
from .api_versions import *
from .configs import *
from .fetch import *
from .group_offsets import *
from .groups import *
from .headers import *
from .metadata import *
from .offsets import *
from .produce import *
from .producer_ids import *
from .producers import *
from .records_admin import *
from .replication import *
from .sasl import *
from .scram_credentials import *
from .topics import *
from .transactions import *

#: Every declared message (requests, responses and headers), by spec name.
ALL_MESSAGES = {
    m.name: m
    for module in (
        headers, api_versions, metadata, produce, fetch, offsets, topics, configs, groups,
        group_offsets, sasl, scram_credentials, producer_ids, producers, transactions,
        records_admin, acls, replication,
    )
    for m in (getattr(module, n) for n in module.__all__)
}
