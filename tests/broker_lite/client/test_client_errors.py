"""The error table: every code maps to its class, with the code, Kafka's retriable flag, and
whether metadata must be refreshed; messages name the code and what it concerns."""

import pytest

from broker_lite.client import errors as e
from broker_lite.protocol import ErrorCode


@pytest.mark.parametrize("code, cls, retriable, invalid_metadata", [
    (ErrorCode.OFFSET_OUT_OF_RANGE, e.OffsetOutOfRangeError, False, False),
    (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, e.UnknownTopicOrPartitionError, True, True),
    (ErrorCode.LEADER_NOT_AVAILABLE, e.LeaderNotAvailableError, True, True),
    (ErrorCode.NOT_LEADER_OR_FOLLOWER, e.NotLeaderError, True, True),
    (ErrorCode.REQUEST_TIMED_OUT, e.KafkaTimeoutError, True, False),
    (ErrorCode.NETWORK_EXCEPTION, e.KafkaConnectionError, True, True),
    (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, e.CoordinatorLoadInProgressError, True, False),
    (ErrorCode.COORDINATOR_NOT_AVAILABLE, e.CoordinatorNotAvailableError, True, False),
    (ErrorCode.NOT_COORDINATOR, e.NotCoordinatorError, True, False),
    (ErrorCode.GROUP_AUTHORIZATION_FAILED, e.GroupAuthorizationFailedError, False, False),
    (ErrorCode.TOPIC_ALREADY_EXISTS, e.TopicAlreadyExistsError, False, False),
    (ErrorCode.NOT_CONTROLLER, e.NotControllerError, True, True),
    (ErrorCode.FENCED_LEADER_EPOCH, e.FencedLeaderEpochError, True, True),
    (ErrorCode.UNSUPPORTED_VERSION, e.UnsupportedVersionError, False, False),
    (ErrorCode.UNKNOWN_TOPIC_ID, e.UnknownTopicIdError, True, True),
])
def test_codes_map_to_classes(code, cls, retriable, invalid_metadata):
    error = e.error_for(code, where="t-0")
    assert type(error) is cls
    assert isinstance(error, e.KafkaClientError)
    assert (error.error_code, error.retriable, error.invalid_metadata) == \
        (code, retriable, invalid_metadata)
    assert str(error).startswith(f"{code.name} ({int(code)}) for t-0: ")


def test_every_class_in_the_table_carries_kafkas_retriable_flag():
    for code, cls in e.ERROR_CLASSES.items():
        assert cls.error_code == code
        if issubclass(cls, e.KafkaApiError):
            assert cls.retriable == code.retriable, cls


def test_group_errors_share_a_base_class():
    for code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
                 ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNSTABLE_OFFSET_COMMIT):
        assert isinstance(e.error_for(code), e.GroupCoordinatorError)


def test_codes_without_a_class_keep_code_and_flag():
    error = e.error_for(ErrorCode.THROTTLING_QUOTA_EXCEEDED, "slow down")
    assert type(error) is e.KafkaApiError
    assert (error.error_code, error.retriable) == (ErrorCode.THROTTLING_QUOTA_EXCEEDED, True)
    assert str(error) == "THROTTLING_QUOTA_EXCEEDED (89): slow down"
    unknown = e.error_for(9999)
    assert unknown.error_code == ErrorCode.UNKNOWN_SERVER_ERROR and not unknown.retriable


def test_no_error():
    assert e.error_for(0) is None


def test_final_error_is_not_retriable_but_keeps_its_class():
    error = e.final_error(e.error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    assert isinstance(error, e.UnknownTopicOrPartitionError) and not error.retriable
    assert e.UnknownTopicOrPartitionError.retriable  # the class keeps Kafka's flag


def test_connection_failures_are_retriable():
    assert e.BrokerNotAvailableError("x").retriable
    assert e.KafkaConnectionError("x").invalid_metadata
    assert not e.InvalidResponseError("x").retriable
    assert isinstance(e.ConfigError("k", "bad"), ValueError)
