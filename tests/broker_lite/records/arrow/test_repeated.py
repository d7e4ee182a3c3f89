"""The topic and partition columns: built once per value and size, sliced for each batch."""

import pyarrow as pa
import pytest

from broker_lite.records.arrow import repeated
from broker_lite.records.arrow.repeated import RepeatedColumn, partition_column, topic_column


@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000, 4097])
def test_the_columns_hold_the_value_n_times(n):
    assert topic_column("orders-ü", n).to_pylist() == ["orders-ü"] * n
    assert topic_column("orders-ü", n).type == pa.string()
    assert partition_column(7, n).to_pylist() == [7] * n
    assert partition_column(7, n).type == pa.int32()


def count_builds():
    built = []

    def build(value, n):
        built.append((value, n))
        return pa.array([value] * n, pa.int64())

    return RepeatedColumn(build, lambda value: 8), built


def test_batches_share_one_column_built_at_a_power_of_two():
    column, built = count_builds()
    first, second = column(5, 1000), column(5, 600)
    assert built == [(5, 1024)]
    assert first.to_pylist() == [5] * 1000 and second.to_pylist() == [5] * 600
    assert first.buffers()[1].address == second.buffers()[1].address  # one buffer, two slices


def test_a_longer_batch_builds_a_longer_column_which_then_serves_the_shorter():
    column, built = count_builds()
    column(5, 10)
    assert column(5, 3000).to_pylist() == [5] * 3000
    assert column(5, 10).to_pylist() == [5] * 10
    assert built == [(5, 16), (5, 4096)]


def test_only_the_most_recently_used_values_are_kept(monkeypatch):
    monkeypatch.setattr(repeated, "KEPT_VALUES", 2)
    column, built = count_builds()
    column(1, 8), column(2, 8), column(1, 8), column(3, 8)  # 2 is the least recently used
    column(1, 8), column(3, 8)
    assert built == [(1, 8), (2, 8), (3, 8)]
    column(2, 8)
    assert built[-1] == (2, 8)


def test_a_column_too_large_to_keep_is_built_for_its_batch_alone(monkeypatch):
    monkeypatch.setattr(repeated, "MAX_KEPT_BYTES", 8 * 1024)
    column, built = count_builds()
    column(5, 1024), column(5, 1024)  # 8 KiB: kept
    column(5, 1025), column(5, 1025)  # would be 16 KiB: built each time, at its own size
    assert built == [(5, 1024), (5, 1025), (5, 1025)]
