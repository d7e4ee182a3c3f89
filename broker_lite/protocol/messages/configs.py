"""Configuration: DescribeConfigs (key 32), AlterConfigs (key 33), IncrementalAlterConfigs (key 44).
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, A, F, Request, Response

DESCRIBE_CONFIGS_REQUEST = Request("DescribeConfigsRequest", 32, "0-4", "4+", [
    A("Resources", "DescribeConfigsResource", "0+", [
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        A("ConfigurationKeys", STRING, "0+", nullable="0+"),
    ]),
    F("IncludeSynonyms", BOOL, "1+"),
    F("IncludeDocumentation", BOOL, "3+"),
])

DESCRIBE_CONFIGS_RESPONSE = Response("DescribeConfigsResponse", 32, "0-4", "4+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Results", "DescribeConfigsResult", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        A("Configs", "DescribeConfigsResourceResult", "0+", [
            F("Name", STRING, "0+"),
            F("Value", STRING, "0+", nullable="0+"),
            F("ReadOnly", BOOL, "0+"),
            F("IsDefault", BOOL, "0"),
            F("ConfigSource", INT8, "1+", default=-1, ignorable=True),
            F("IsSensitive", BOOL, "0+"),
            A("Synonyms", "DescribeConfigsSynonym", "1+", [
                F("Name", STRING, "1+"),
                F("Value", STRING, "1+", nullable="0+"),
                F("Source", INT8, "1+"),
            ], ignorable=True),
            F("ConfigType", INT8, "3+", ignorable=True),
            F("Documentation", STRING, "3+", nullable="0+", ignorable=True),
        ]),
    ]),
])

ALTER_CONFIGS_REQUEST = Request("AlterConfigsRequest", 33, "0-2", "2+", [
    A("Resources", "AlterConfigsResource", "0+", [
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        A("Configs", "AlterableConfig", "0+", [
            F("Name", STRING, "0+"),
            F("Value", STRING, "0+", nullable="0+"),
        ]),
    ]),
    F("ValidateOnly", BOOL, "0+"),
])

ALTER_CONFIGS_RESPONSE = Response("AlterConfigsResponse", 33, "0-2", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Responses", "AlterConfigsResourceResponse", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
    ]),
])

INCREMENTAL_ALTER_CONFIGS_REQUEST = Request("IncrementalAlterConfigsRequest", 44, "0-1", "1+", [
    A("Resources", "AlterConfigsResource", "0+", [
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
        A("Configs", "AlterableConfig", "0+", [
            F("Name", STRING, "0+"),
            F("ConfigOperation", INT8, "0+"),
            F("Value", STRING, "0+", nullable="0+"),
        ]),
    ]),
    F("ValidateOnly", BOOL, "0+"),
])

INCREMENTAL_ALTER_CONFIGS_RESPONSE = Response("IncrementalAlterConfigsResponse", 44, "0-1", "1+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Responses", "AlterConfigsResourceResponse", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("ErrorMessage", STRING, "0+", nullable="0+"),
        F("ResourceType", INT8, "0+"),
        F("ResourceName", STRING, "0+"),
    ]),
])


__all__ = [
    "ALTER_CONFIGS_REQUEST",
    "ALTER_CONFIGS_RESPONSE",
    "DESCRIBE_CONFIGS_REQUEST",
    "DESCRIBE_CONFIGS_RESPONSE",
    "INCREMENTAL_ALTER_CONFIGS_REQUEST",
    "INCREMENTAL_ALTER_CONFIGS_RESPONSE",
]
