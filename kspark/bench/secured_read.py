"""Benchmark: reading a topic over SASL_SSL against PLAINTEXT, in one run: the broker's consume
rate (one confluent-kafka consumer draining the topic) and a kpy batch read
(``spark.read.format("kpy")``), each over both listeners of the same broker.

    python -m kspark.bench.secured_read [--records 2000000] [--partitions 4] [--repeat 3]

broker_lite runs as its own process (embedded ZooKeeper, logs on disk) with two listeners:
PLAINTEXT, and SASL_SSL with SCRAM-SHA-512 (certificates made for the run; the user's
credential set through AlterUserScramCredentials). Under TLS the broker cannot hand record data
to ``sendfile``: it reads it with ``os.pread`` and encrypts it, as Kafka's
``SslTransportLayer.transferFrom`` does; the clients decrypt (librdkafka in C, kpy's executors
with Python's ``ssl``). The topic is loaded once over PLAINTEXT with ``--records`` records of
100-byte values in ``--partitions`` partitions (uncompressed v2 batches of 8,000 records, as
:mod:`kspark.bench.source_read` loads them). Each round reads it all four ways, the protocols
alternating from round to round; figures are medians over ``--repeat`` rounds, ratios are
SASL_SSL / PLAINTEXT. Target: SASL_SSL >= 0.6x PLAINTEXT for both.
"""

import argparse
import statistics
import tempfile
import uuid
from pathlib import Path

from broker_lite.client import KafkaClient
from broker_lite.client.admin.scram import UserScramCredentialUpsertion
from broker_lite.security.jaas import jaas_config
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.server.bench import BrokerLiteProcess
from kspark.bench.ceiling_source import VALUE_BYTES
from kspark.bench.source_read import confluent_drain, load, timed

USER, PASSWORD = "bench", "bench-secret"
MECHANISM = "SCRAM-SHA-512"
PROTOCOLS = ("PLAINTEXT", "SASL_SSL")
WAYS = {"confluent": "confluent-kafka consumer (the broker's consume rate)",
        "kpy": "kpy batch read (spark.read.format('kpy'))"}


class SecuredBroker:
    """broker_lite in its own process, listening PLAINTEXT and SASL_SSL; ``bootstrap[protocol]``
    and ``ca_pem``."""

    def __init__(self, directory: Path):
        ca = TestCertificateAuthority("kpy bench CA")
        certificate = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "broker.pem").write_text(certificate.certificate_pem + certificate.key_pem)
        self.ca_pem = ca.certificate_pem
        self.process = BrokerLiteProcess(directory, {
            "listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.name.sasl_ssl.ssl.keystore.type": "PEM",
            "listener.name.sasl_ssl.ssl.keystore.location": str(directory / "broker.pem"),
            "sasl.enabled.mechanisms": MECHANISM,
            "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "4"})
        secured = self.process.process.stdout.readline()  # the second listener's line
        if "(SASL_SSL)" not in secured:
            self.stop()
            raise RuntimeError(f"broker-lite did not listen with SASL_SSL: {secured!r}")
        self.bootstrap = {"PLAINTEXT": self.process.bootstrap,
                          "SASL_SSL": secured.split(" (")[0].rsplit(" ", 1)[-1]}
        with KafkaClient({"bootstrap.servers": self.bootstrap["PLAINTEXT"]}) as client:
            client.admin.scram_credentials.alter([
                UserScramCredentialUpsertion(USER, MECHANISM, PASSWORD, iterations=4096)])

    def kafka_settings(self, protocol: str) -> dict[str, str]:
        """kpy's settings, Kafka's names (``kafka.``-prefixed for Spark by the caller)."""
        settings = {"bootstrap.servers": self.bootstrap[protocol]}
        if protocol == "SASL_SSL":
            settings.update({"security.protocol": "SASL_SSL", "sasl.mechanism": MECHANISM,
                             "sasl.jaas.config": jaas_config(MECHANISM, username=USER,
                                                             password=PASSWORD),
                             "ssl.truststore.certificates": self.ca_pem})
        return settings

    def librdkafka_settings(self, protocol: str) -> dict:
        settings = {"bootstrap.servers": self.bootstrap[protocol]}
        if protocol == "SASL_SSL":
            settings.update({"security.protocol": "SASL_SSL", "sasl.mechanism": MECHANISM,
                             "sasl.username": USER, "sasl.password": PASSWORD,
                             "ssl.ca.pem": self.ca_pem})
        return settings

    def stop(self) -> None:
        self.process.stop()


def kpy_batch(spark, settings: dict[str, str], topic: str) -> None:
    (spark.read.format("kpy").options(**{f"kafka.{k}": v for k, v in settings.items()})
     .option("subscribe", topic).load().write.format("noop").mode("overwrite").save())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    records = args.records // args.partitions * args.partitions

    import kspark

    times: dict[tuple[str, str], list[float]] = {(w, p): [] for w in WAYS for p in PROTOCOLS}
    with tempfile.TemporaryDirectory(prefix="kpy-bench-") as tmp:
        tmp = Path(tmp)
        broker = SecuredBroker(tmp / "broker")
        spark = None
        try:
            topic = f"bench-{uuid.uuid4().hex[:8]}"
            with KafkaClient(broker.kafka_settings("SASL_SSL")) as client:
                client.admin.create_topics([(topic, args.partitions, 1, {})])
            load(broker.bootstrap["PLAINTEXT"], topic, records, args.partitions,
                 tmp / "rows.parquet")
            spark = kspark.session("kpy-bench", config={"spark.sql.shuffle.partitions": "4"})
            spark.sparkContext.setLogLevel("ERROR")
            for protocol in PROTOCOLS:  # warm up: JVM, workers, imports, TLS contexts
                kpy_batch(spark, broker.kafka_settings(protocol), topic)
            for round_ in range(args.repeat):
                order = PROTOCOLS if round_ % 2 == 0 else PROTOCOLS[::-1]
                for protocol in order:
                    times["confluent", protocol].append(timed(lambda p=protocol: confluent_drain(
                        broker.librdkafka_settings(p), topic, args.partitions, records)))
                    times["kpy", protocol].append(timed(lambda p=protocol: kpy_batch(
                        spark, broker.kafka_settings(p), topic)))
        finally:
            if spark is not None:
                spark.stop()
            broker.stop()
    report(records, args.partitions, args.repeat, times)


def report(records: int, partitions: int, repeat: int,
           times: dict[tuple[str, str], list[float]]) -> None:
    print(f"{records:,} records of {VALUE_BYTES}-byte values in {partitions} partitions, one "
          f"broker_lite (own process); SASL_SSL: SCRAM-SHA-512, TLS (os.pread, no sendfile); "
          f"median of {repeat} rounds, records/s (MB/s of values):")
    for way, label in WAYS.items():
        rate = {p: records / statistics.median(times[way, p]) for p in PROTOCOLS}
        figures = "  ".join(f"{p} {rate[p]:>11,.0f} ({rate[p] * VALUE_BYTES / 1e6:,.1f} MB/s)"
                            for p in PROTOCOLS)
        print(f"  {label:<52} {figures}  ratio {rate['SASL_SSL'] / rate['PLAINTEXT']:.2f}")
    print("target: SASL_SSL >= 0.6x PLAINTEXT for both")


if __name__ == "__main__":
    main()
