"""DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key 51): the SCRAM
credentials of users, stored by the brokers (KIP-554).

A credential is named by its user and mechanism (1: SCRAM-SHA-256, 2: SCRAM-SHA-512, Kafka's
``ScramMechanism.type``). Describing gives only the mechanisms and iteration counts. Altering
sends, per upsertion, the salt and the salted password (``Hi(password, salt, iterations)``) the
client computed, never the password; the broker derives the stored and server keys from them.
"""

from ..schema import BYTES, INT8, INT16, INT32, STRING, A, F, Request, Response

DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST = Request(
    "DescribeUserScramCredentialsRequest", 50, "0", "0+", [
        A("Users", "UserName", "0+", [
            F("Name", STRING, "0+"),
        ], nullable="0+"),
    ])

DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE = Response(
    "DescribeUserScramCredentialsResponse", 50, "0", "0+", [
        F("ThrottleTimeMs", INT32, "0+"),
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
        A("Results", "DescribeUserScramCredentialsResult", "0+", [
            F("User", STRING, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+"),
            A("CredentialInfos", "CredentialInfo", "0+", [
                F("Mechanism", INT8, "0+"),
                F("Iterations", INT32, "0+"),
            ]),
        ]),
    ])

ALTER_USER_SCRAM_CREDENTIALS_REQUEST = Request(
    "AlterUserScramCredentialsRequest", 51, "0", "0+", [
        A("Deletions", "ScramCredentialDeletion", "0+", [
            F("Name", STRING, "0+"),
            F("Mechanism", INT8, "0+"),
        ]),
        A("Upsertions", "ScramCredentialUpsertion", "0+", [
            F("Name", STRING, "0+"),
            F("Mechanism", INT8, "0+"),
            F("Iterations", INT32, "0+"),
            F("Salt", BYTES, "0+"),
            F("SaltedPassword", BYTES, "0+"),
        ]),
    ])

ALTER_USER_SCRAM_CREDENTIALS_RESPONSE = Response(
    "AlterUserScramCredentialsResponse", 51, "0", "0+", [
        F("ThrottleTimeMs", INT32, "0+"),
        A("Results", "AlterUserScramCredentialsResult", "0+", [
            F("User", STRING, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+"),
        ]),
    ])


__all__ = [
    "DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST",
    "DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE",
    "ALTER_USER_SCRAM_CREDENTIALS_REQUEST",
    "ALTER_USER_SCRAM_CREDENTIALS_RESPONSE",
]
