"""A consume-transform-produce loop for the crash test of test_transactions.py, run as a
separate process so it can be killed at any point.

Usage: python txn_copier.py SERVERS INPUT OUTPUT GROUP TRANSACTIONAL_ID END

Copies ``INPUT`` partition 0 to ``OUTPUT`` as ``b"copy of " + value``, a few records per
transaction, committing the consumed offsets in the same transaction, and exits once its
group's committed offset is ``END``.
"""

import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

BATCH = 7


def main(servers: str, source: str, target: str, group: str, transactional_id: str,
         end: int) -> None:
    producer = Producer({"bootstrap.servers": servers, "transactional.id": transactional_id,
                         "linger.ms": 1})
    producer.init_transactions(60)  # fences and aborts what a killed predecessor left open
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group,
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(source, 0)])  # from the group's committed offset
    while True:
        messages = [m for m in consumer.consume(BATCH, 1.0) if not m.error()]
        if not messages:
            committed = consumer.committed([TopicPartition(source, 0)], 10)[0].offset
            if committed >= end:
                break
            continue
        producer.begin_transaction()
        for message in messages:
            producer.produce(target, value=b"copy of " + message.value())
            time.sleep(0.01)  # a wider window for the kill to land inside a transaction
        next_offset = messages[-1].offset() + 1
        producer.send_offsets_to_transaction([TopicPartition(source, 0, next_offset)],
                                             consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        print(next_offset, flush=True)
        if next_offset >= end:
            break
    consumer.close()


if __name__ == "__main__":
    main(*sys.argv[1:6], int(sys.argv[6]))
