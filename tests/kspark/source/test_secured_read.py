"""format("kpy") over SASL_SSL with SCRAM-SHA-512 and inline TLS material, through the secured
front of tests/broker_lite/security relaying to a real broker_lite: a write and a batch read
(the settings reach the executors' clients), and no secret in ``explain()`` or a failed query's
exception text."""

import importlib.util
import uuid
from pathlib import Path

import pytest

from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.scram import ScramCredential
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.security.tls import server_context
from broker_lite.server.testing import start_brokers, stop_brokers
from kspark.testing.tiers import needs

_FRONT = Path(__file__).parents[2] / "broker_lite" / "security" / "secured_front.py"
_spec = importlib.util.spec_from_file_location("secured_front", _FRONT)
secured_front = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(secured_front)

PASSWORD = "etl-secret-password"
STORED = ScramCredential.from_password("SCRAM-SHA-512", PASSWORD).to_text()


@pytest.fixture
@needs("broker", "zookeeper")
def secured_servers(zookeeper_connect, tmp_path):
    ca = TestCertificateAuthority()
    certificate = ca.issue("broker", hosts=["127.0.0.1"])
    front = secured_front.SecuredFront(
        ssl_context=server_context({"ssl.keystore.certificate.chain": certificate.certificate_pem,
                                    "ssl.keystore.key": certificate.key_pem}),
        authenticator_factory=lambda: ServerAuthenticator(
            ["SCRAM-SHA-512"], scram_credentials=lambda m, user:
            ScramCredential.parse(STORED) if user == "etl" else None))
    brokers = start_brokers(zookeeper_connect, tmp_path, properties={
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{front.port}"})
    front.start(brokers[0].port)
    yield f"127.0.0.1:{front.port}", ca
    front.stop()
    stop_brokers(brokers)


def secured_options(servers, ca, password=PASSWORD):
    return {"kafka.bootstrap.servers": servers, "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                      f'required username="etl" password="{password}";',
            "kafka.ssl.truststore.certificates": ca.certificate_pem}


def test_write_and_read_over_sasl_ssl_without_showing_secrets(spark, secured_servers):
    servers, ca = secured_servers
    topic = f"secured-{uuid.uuid4().hex[:6]}"
    options = secured_options(servers, ca)
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(20)],
                                 "key string, value string")
    rows.write.format("kpy").mode("append").options(**options).option("topic", topic).save()
    df = spark.read.format("kpy").options(**options).option("subscribe", topic).load()
    got = sorted(r.value.decode() for r in df.select("value").collect())
    assert got == sorted(f"v{i}" for i in range(20))
    plan = df._jdf.queryExecution().toString()
    assert PASSWORD not in plan and "PRIVATE KEY" not in plan
    wrong = secured_options(servers, ca, password="not-the-password")
    with pytest.raises(Exception, match="SASL_AUTHENTICATION_FAILED") as failure:
        spark.read.format("kpy").options(**wrong).option("subscribe", topic).load().collect()
    assert "not-the-password" not in str(failure.value) and PASSWORD not in str(failure.value)
