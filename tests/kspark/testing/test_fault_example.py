import pytest


@pytest.mark.parametrize("kpy_faulty_cluster", [{"brokers": 3}], indirect=True)
def test_the_pipeline_rides_out_an_isolated_leader(kpy_spark, kpy_faulty_cluster, kpy_topic,
                                                   kpy_produce, kpy_read):
    kafka = {"kafka.bootstrap.servers": kpy_faulty_cluster.bootstrap_servers}
    source = kpy_topic(partitions=1, replication_factor=3)
    sink = kpy_topic(partitions=1, replication_factor=3)  # on one broker, it may be cut off
    kpy_produce(source, [str(i) for i in range(1000)])
    leader = kpy_faulty_cluster.leader(source, 0)
    kpy_faulty_cluster.isolate(leader, from_=("zookeeper", "brokers"))
    kpy_faulty_cluster.wait_for_leader(source, 0, other_than=leader)
    df = kpy_spark.read.format("kpy").options(**kafka, subscribe=source).load()
    df.select("value").write.format("kpy").options(**kafka, topic=sink).mode("append").save()
    kpy_faulty_cluster.heal()
    kpy_faulty_cluster.wait_for_isr(sink, 0)  # every broker back: none still thinks it leads
    assert len(kpy_read(sink)) == 1000
