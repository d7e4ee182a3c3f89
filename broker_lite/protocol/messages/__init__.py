"""The schemas of the APIs broker_lite knows, one module per API family, as Python data.

Every declaration carries the full field list and version ranges of Kafka's JSON spec for that
message (every version of the spec, including ones the broker does not advertise); the test
``tests/broker_lite/protocol/test_spec_crosscheck.py`` checks them field by field against the
specs. Which versions the broker advertises is the server's business.

The modules are imported when first used: :data:`broker_lite.protocol.API_SCHEMAS` imports an
API's module when the API is first looked up, so a client that speaks a few APIs builds only
their schemas. A name asked of this package (``messages.METADATA_REQUEST``,
:data:`ALL_MESSAGES`: every declared message, requests, responses and headers, by spec name)
imports them all.
"""

MODULES = (
    "headers", "api_versions", "metadata", "produce", "fetch", "offsets", "topics", "configs",
    "groups", "group_offsets", "sasl", "scram_credentials", "producer_ids", "producers",
    "transactions", "records_admin", "acls", "replication",
    "share_groups", "share_state", "consumer_groups",
)


def __getattr__(name: str):
    namespace = globals()
    messages = {}
    for module_name in MODULES:
        __import__(f"{__name__}.{module_name}")
        module = namespace[module_name]  # the import made it an attribute of the package
        for declared in module.__all__:
            namespace[declared] = getattr(module, declared)
            messages[namespace[declared].name] = namespace[declared]
    namespace["ALL_MESSAGES"] = messages
    if name not in namespace:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return namespace[name]
