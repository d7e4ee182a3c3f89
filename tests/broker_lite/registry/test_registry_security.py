"""A secured registry: HTTPS, HTTP Basic logins from Confluent's realm and roles files, and its
store on a SASL_SSL cluster; confluent-kafka's client with ``ssl.ca.location`` and
``basic.auth.user.info``. Wrong or missing credentials are 401 (a role not let in 403), and no
password reaches the log."""

import logging
import ssl
import uuid

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from broker_lite.config.parsers import ConfigError
from broker_lite.registry import RegistryConfig, SchemaRegistry
from broker_lite.registry.auth import BasicAuthenticator, parse_users


@pytest.fixture
def secured_registry(kpy_secured_broker, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    security = kpy_secured_broker.security
    own = uuid.uuid4().hex[:8]
    properties = {**security.registry_properties(kpy_secured_broker.bootstrap_servers,
                                                 tmp_path),
                  "kafkastore.topic": f"_schemas-{own}",
                  "schema.registry.group.id": f"registry-{own}"}
    registry = SchemaRegistry(RegistryConfig(properties)).start()
    yield registry, security.registry_client_settings(registry.url, tmp_path, "alice")
    registry.stop()


def test_https_basic_auth_and_a_sasl_ssl_store(secured_registry, kpy_secured_broker, caplog):
    registry, settings = secured_registry
    assert registry.url.startswith("https://")
    assert registry.store.client.config.security_protocol.upper() == "SASL_SSL"
    client = SchemaRegistryClient(settings)
    schema_id = client.register_schema("secured-value", Schema('"string"', "AVRO"))
    assert client.get_schema(schema_id).schema_str == '"string"'
    password = kpy_secured_broker.security.users["alice"]
    wrong = SchemaRegistryClient({**settings, "basic.auth.user.info": "alice:not-it"})
    with pytest.raises(SchemaRegistryError) as refused:
        wrong.get_subjects()
    assert (refused.value.http_status_code, refused.value.error_code) == (401, 401)
    with httpx.Client(verify=ssl.create_default_context(cafile=settings["ssl.ca.location"]),
                      timeout=30) as http:
        answer = http.get(f"{registry.url}/subjects")
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"] == 'Basic realm="SchemaRegistry"'
        answer = http.post(f"{registry.url}/subjects/x/versions", json={"schema": '"int"'},
                           auth=("alice", "not-it"))
        assert (answer.status_code, answer.json()["error_code"]) == (401, 401)
        assert "not-it" not in answer.text
        assert http.get(f"{registry.url}/subjects", auth=("alice", password)).json() == \
            ["secured-value"]
    with pytest.raises(httpx.HTTPError):  # no plain HTTP on the HTTPS listener
        httpx.get(registry.url.replace("https://", "http://") + "/subjects", timeout=10)
    assert client.get_subjects() == ["secured-value"]  # still serving
    assert password not in caplog.text and "not-it" not in caplog.text
    broker_password = kpy_secured_broker.security.broker_password
    assert broker_password not in caplog.text and broker_password not in repr(registry.config)


def test_roles_let_in_only_users_holding_one():
    users = parse_users("admin: MD5:0192023a7bbd73250516f069df18b500,admin\n"
                        "dev: dev-pass,developer\n")
    authenticator = BasicAuthenticator("SchemaRegistry", users, ("admin",))
    import base64

    def header(user: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    assert authenticator.authenticate(header("admin", "admin123")) == "admin"
    with pytest.raises(Exception) as forbidden:
        authenticator.authenticate(header("dev", "dev-pass"))
    assert forbidden.value.status == 403
    for bad in (None, "Bearer x", "Basic !!!", header("admin", "wrong"), header("ghost", "x")):
        with pytest.raises(Exception) as refused:
            authenticator.authenticate(bad)
        assert refused.value.status == 401


def test_basic_auth_needs_its_realm_and_files(tmp_path):
    base = {"kafkastore.bootstrap.servers": "127.0.0.1:9092", "authentication.method": "BASIC"}
    with pytest.raises(ConfigError, match=r"authentication\.realm"):
        RegistryConfig(base)
    jaas = tmp_path / "jaas.conf"
    jaas.write_text('Other {\n  org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required\n'
                    '  file="/nowhere";\n};\n')
    config = RegistryConfig({**base, "authentication.realm": "SchemaRegistry",
                             "java.security.auth.login.config": str(jaas)})
    with pytest.raises(ConfigError, match="no entry SchemaRegistry"):
        SchemaRegistry(config)


def test_https_with_required_client_certificates(kpy_schema_registries, tmp_path):
    from broker_lite.security.testing import TestCertificateAuthority

    ca = TestCertificateAuthority("registry test CA")
    server = ca.issue("registry", hosts=["127.0.0.1"], server=True)
    client = ca.issue("reader", client=True)
    registry = kpy_schema_registries(properties={
        "listeners": "https://127.0.0.1:0", "ssl.client.authentication": "REQUIRED",
        "ssl.keystore.certificate.chain": server.certificate_pem,
        "ssl.keystore.key": server.key_pem, "ssl.keystore.type": "PEM",
        "ssl.truststore.certificates": ca.certificate_pem, "ssl.truststore.type": "PEM"})
    (tmp_path / "ca.pem").write_text(ca.certificate_pem)
    (tmp_path / "client.pem").write_text(client.certificate_pem)
    (tmp_path / "client.key").write_text(client.key_pem)
    trust = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
    with pytest.raises(httpx.HTTPError):  # no certificate: the handshake is refused
        httpx.get(f"{registry.url}/subjects", verify=trust, timeout=10)
    confluent = SchemaRegistryClient({"url": registry.url,
                                      "ssl.ca.location": str(tmp_path / "ca.pem"),
                                      "ssl.certificate.location": str(tmp_path / "client.pem"),
                                      "ssl.key.location": str(tmp_path / "client.key")})
    assert confluent.register_schema("mtls-value", Schema('"int"', "AVRO")) > 0
    assert confluent.get_subjects() == ["mtls-value"]
