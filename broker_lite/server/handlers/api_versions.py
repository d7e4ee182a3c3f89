"""ApiVersions: the versions of every API this broker serves, and (v3+) the feature levels
Kafka 4 brokers report: each feature's supported range and its finalized level.

==============  =========  =========  ==================================================
feature         supported  finalized  meaning
==============  =========  =========  ==================================================
group.version   0-1        1 (0 when  1: the consumer group protocol of KIP-848 is on
                           it is off)  (``group.coordinator.rebalance.protocols``)
==============  =========  =========  ==================================================

Kafka finalizes features in its metadata log and reports the log's offset as the features'
epoch; here the levels follow from the broker's settings, so the epoch is 0.
"""

FINALIZED_FEATURES_EPOCH = 0


def _group_version(context) -> int:
    return 1 if context.services.groups.consumer_config.enabled else 0


#: feature name -> (min supported, max supported, finalized level of the broker)
FEATURES = {
    "group.version": (0, 1, _group_version),
}


def handle(context, body: dict) -> dict:
    response = {"error_code": 0, "api_keys": context.services.api_versions,
                "throttle_time_ms": 0}
    if context.version >= 3:
        levels = {name: level(context) for name, (_, _, level) in FEATURES.items()}
        response.update(
            supported_features=[{"name": name, "min_version": low, "max_version": high}
                                for name, (low, high, _) in FEATURES.items()],
            finalized_features_epoch=FINALIZED_FEATURES_EPOCH,
            finalized_features=[{"name": name, "max_version_level": level,
                                 "min_version_level": level}
                                for name, level in levels.items() if level > 0])
    return response
