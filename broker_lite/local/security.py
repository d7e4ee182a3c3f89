"""A secured local cluster's material and settings: what :class:`~broker_lite.local.LocalKafka`
and the pytest plugin's secured brokers use.

:class:`LocalSecurity` generates at run time (nothing secret is written to disk or committed) a
certificate authority, a broker certificate for ``localhost`` and ``127.0.0.1``, and a client
certificate per user (``CN=<user>``) when asked; and gives

* the broker's properties (:meth:`LocalSecurity.broker_properties`): one listener named after
  the security protocol, which is also the inter-broker listener; its keystore and its
  truststore (the CA: clients' certificates, other brokers') as inline PEM; for SASL the
  mechanisms, PLAIN's users in the
  listener's JAAS configuration, and a broker user (``broker``, a random password) the broker
  authenticates to other brokers with;
* the users' SCRAM credentials to store (:meth:`LocalSecurity.store_credentials`, in Kafka's
  ZooKeeper format);
* a client's settings, Kafka's names (:meth:`LocalSecurity.client_settings`): the truststore
  inline, the user's login or certificate.

>>> security = LocalSecurity("SASL_SSL", users={"alice": "alice-secret"})
>>> properties = security.broker_properties()
>>> properties["listeners"], properties["sasl.enabled.mechanisms"]
('SASL_SSL://127.0.0.1:0', 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512')
>>> settings = security.client_settings("127.0.0.1:9093", "alice", "SCRAM-SHA-512")
>>> settings["security.protocol"], settings["sasl.mechanism"]
('SASL_SSL', 'SCRAM-SHA-512')
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from broker_lite.security.jaas import jaas_config
from broker_lite.security.scram import MECHANISMS as SCRAM_MECHANISMS
from broker_lite.security.scram import ScramCredential

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
BROKER_USER = "broker"  # who brokers authenticate to each other as


class LocalSecurity:
    """The TLS and SASL of a local cluster (see the module docstring).

    Parameters
    ----------
    protocol
        ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
    users
        User name -> password: PLAIN users and SCRAM credentials (SASL); with
        ``client_auth``, each also gets a client certificate (``CN=<user>``).
    mechanisms
        The SASL mechanisms enabled (default PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; OAUTHBEARER,
        Kafka's unsecured tokens, may be added).
    client_auth
        ``ssl.client.auth`` of the listener: ``none``, ``requested`` or ``required``.
    """

    def __init__(self, protocol: str = "SASL_SSL", users: Mapping[str, str] | None = None,
                 mechanisms: Iterable[str] = DEFAULT_MECHANISMS, client_auth: str = "none"):
        protocol = protocol.upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"unknown security protocol {protocol!r}; expected one of "
                             f"{', '.join(SECURITY_PROTOCOLS)}")
        if client_auth not in ("none", "requested", "required"):
            raise ValueError(f"ssl.client.auth must be none, requested or required, got "
                             f"{client_auth!r}")
        self.protocol = protocol
        self.users = dict(users or {})
        self.mechanisms = tuple(mechanisms)
        self.client_auth = client_auth
        self.tls = protocol in ("SSL", "SASL_SSL")
        self.sasl = protocol.startswith("SASL_")
        self.broker_password = secrets.token_urlsafe(24)
        self.ca = None
        self._certificates: dict[str, object] = {}
        if self.tls:
            from broker_lite.security.testing import TestCertificateAuthority

            self.ca = TestCertificateAuthority("kpy local CA")
            # a server to clients, and a client of the other brokers (their ssl.client.auth)
            self.broker_certificate = self.ca.issue("broker", hosts=["localhost", "127.0.0.1"],
                                                    client=True, server=True)

    @property
    def listener(self) -> str:
        return self.protocol

    @property
    def ca_pem(self) -> str | None:
        """The certificate authority clients trust (PEM), None without TLS."""
        return self.ca.certificate_pem if self.ca is not None else None

    def client_certificate(self, user: str):
        """The client certificate of ``user`` (``CN=<user>``), issued on first use."""
        if user not in self._certificates:
            self._certificates[user] = self.ca.issue(user, client=True)
        return self._certificates[user]

    # -- the broker --------------------------------------------------------------------------

    def broker_properties(self, port: int = 0) -> dict[str, str]:
        """The broker's listener and security settings (Kafka's names)."""
        prefix = f"listener.name.{self.listener.lower()}."
        properties = {"listeners": f"{self.listener}://127.0.0.1:{port}",
                      "inter.broker.listener.name": self.listener}
        if self.tls:
            properties.update({
                f"{prefix}ssl.keystore.certificate.chain":
                    self.broker_certificate.certificate_pem,
                f"{prefix}ssl.keystore.key": self.broker_certificate.key_pem,
                f"{prefix}ssl.keystore.type": "PEM",
                f"{prefix}ssl.client.auth": self.client_auth,
                # the CA checks clients' certificates, and the other brokers' when this one
                # connects to them
                f"{prefix}ssl.truststore.certificates": self.ca.certificate_pem,
                f"{prefix}ssl.truststore.type": "PEM"})
        if self.sasl:
            properties["sasl.enabled.mechanisms"] = ",".join(self.mechanisms)
            inter_broker = next(m for m in (*DEFAULT_MECHANISMS, "OAUTHBEARER")
                                if m in self.mechanisms)
            properties["sasl.mechanism.inter.broker.protocol"] = inter_broker
            for mechanism in self.mechanisms:
                properties[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = \
                    self._broker_jaas(mechanism)
        return properties

    def _broker_jaas(self, mechanism: str) -> str:
        if mechanism == "OAUTHBEARER":
            return jaas_config(mechanism, unsecuredLoginStringClaim_sub=BROKER_USER)
        options = {"username": BROKER_USER, "password": self.broker_password}
        if mechanism == "PLAIN":
            options.update({f"user_{name}": password
                            for name, password in self._all_users().items()})
        return jaas_config(mechanism, **options)

    def _all_users(self) -> dict[str, str]:
        return {BROKER_USER: self.broker_password, **self.users}

    def scram_credentials(self) -> dict[str, dict[str, str]]:
        """Each user's config in ZooKeeper: its SCRAM credentials (Kafka's format)."""
        mechanisms = [m for m in self.mechanisms if m in SCRAM_MECHANISMS] if self.sasl else []
        return {user: {m: ScramCredential.from_password(m, password).to_text()
                       for m in mechanisms}
                for user, password in self._all_users().items()} if mechanisms else {}

    def store_credentials(self, zookeeper_client) -> list[str]:
        """Write the users' SCRAM credentials to ``/config/users`` (before the brokers start,
        as Kafka's ``kafka-configs.sh --zookeeper`` bootstraps them); the users written."""
        from broker_lite.zk.users import set_user_config, user_config

        written = []
        for user, credentials in self.scram_credentials().items():
            set_user_config(zookeeper_client, user, {**user_config(zookeeper_client, user),
                                                     **credentials})
            written.append(user)
        return written

    # -- the schema registry -----------------------------------------------------------------

    def registry_properties(self, bootstrap_servers: str, directory: Path) -> dict[str, str]:
        """A schema registry's settings (Confluent's names) for this cluster: its store
        reaches the cluster as the broker's user; with TLS it serves HTTPS with the broker's
        certificate, with SASL it asks for HTTP Basic logins of the users (their passwords
        written only as MD5 digests, in ``directory``), any role let in."""
        properties = {f"kafkastore.{name}": value for name, value in
                      self.client_settings(bootstrap_servers, BROKER_USER).items()}
        properties["kafkastore.bootstrap.servers"] = bootstrap_servers
        properties["listeners"] = f"{'https' if self.tls else 'http'}://127.0.0.1:0"
        if self.tls:
            properties.update({
                "ssl.keystore.certificate.chain": self.broker_certificate.certificate_pem,
                "ssl.keystore.key": self.broker_certificate.key_pem,
                "ssl.keystore.type": "PEM",
                "ssl.truststore.certificates": self.ca.certificate_pem,
                "ssl.truststore.type": "PEM"})
        if self.sasl:
            users = directory / "registry-users.properties"
            users.write_text("".join(
                f"{name}: MD5:{hashlib.md5(password.encode()).hexdigest()},user\n"
                for name, password in self._all_users().items()), encoding="utf-8")
            jaas = directory / "registry-jaas.conf"
            jaas.write_text(f'SchemaRegistry {{\n  org.eclipse.jetty.jaas.spi.'
                            f'PropertyFileLoginModule required\n  file="{users}";\n}};\n',
                            encoding="utf-8")
            properties.update({"authentication.method": "BASIC",
                               "authentication.realm": "SchemaRegistry",
                               "authentication.roles": "*",
                               "java.security.auth.login.config": str(jaas)})
        return properties

    def registry_client_settings(self, url: str, directory: Path, user: str | None = None
                                 ) -> dict[str, str]:
        """confluent-kafka's ``SchemaRegistryClient`` settings for ``user`` (default: the first
        user) of this cluster's registry at ``url``: the CA as a file (the client reads files
        only), the user's Basic login."""
        settings = {"url": url}
        if self.tls:
            ca = directory / "registry-ca.pem"
            ca.write_text(self.ca.certificate_pem, encoding="utf-8")
            settings["ssl.ca.location"] = str(ca)
        if self.sasl:
            user = user or next(iter(self.users), BROKER_USER)
            settings["basic.auth.user.info"] = f"{user}:{self._all_users()[user]}"
        return settings

    # -- clients -----------------------------------------------------------------------------

    def client_settings(self, bootstrap_servers: str, user: str | None = None,
                        mechanism: str | None = None) -> dict[str, str]:
        """A client's settings for ``user`` (default: the first user given, else the broker's)
        with ``mechanism`` (default: the first enabled), Kafka's names."""
        user = user or next(iter(self.users), BROKER_USER)
        settings = {"bootstrap.servers": bootstrap_servers, "security.protocol": self.protocol}
        if self.tls:
            settings["ssl.truststore.certificates"] = self.ca.certificate_pem
            if self.client_auth != "none" and self.protocol == "SSL":
                certificate = self.client_certificate(user)
                settings["ssl.keystore.certificate.chain"] = certificate.certificate_pem
                settings["ssl.keystore.key"] = certificate.key_pem
        if self.sasl:
            mechanism = mechanism or self.mechanisms[0]
            if mechanism not in self.mechanisms:
                raise ValueError(f"{mechanism} is not enabled ({', '.join(self.mechanisms)})")
            settings["sasl.mechanism"] = mechanism
            settings["sasl.jaas.config"] = (
                jaas_config(mechanism, unsecuredLoginStringClaim_sub=user)
                if mechanism == "OAUTHBEARER" else
                jaas_config(mechanism, username=user, password=self._all_users()[user]))
        return settings
