"""The registry of API schemas: looked up by ApiKey or by the raw key from the wire, every
declared API present, and an API's schemas built when it is first looked up (a client that speaks
a few APIs builds only theirs)."""

import json
import subprocess
import sys

import pytest

from broker_lite.protocol import API_SCHEMAS, ApiKey, api_for
from broker_lite.protocol.messages import ALL_MESSAGES


def test_an_api_is_the_same_by_key_and_by_raw_number():
    api = API_SCHEMAS[ApiKey.LIST_OFFSETS]
    assert api_for(2) is api is API_SCHEMAS.get(2) is API_SCHEMAS[2]
    assert (api.key, api.name, api.request.name) == (ApiKey.LIST_OFFSETS, "ListOffsets",
                                                     "ListOffsetsRequest")


def test_unknown_and_undeclared_apis_are_absent():
    assert api_for(999) is None and API_SCHEMAS.get(ApiKey.VOTE, "none") == "none"
    assert 999 not in API_SCHEMAS and ApiKey.VOTE not in API_SCHEMAS and 3 in API_SCHEMAS
    with pytest.raises(KeyError):
        API_SCHEMAS[ApiKey.VOTE]


def test_every_declared_request_and_response_is_an_api():
    apis = dict(API_SCHEMAS.items())
    # 12: the share groups' (KIP-932); 2: the consumer groups' (KIP-848)
    assert len(apis) == len(API_SCHEMAS) == 45 + 12 + 2
    declared = {name for name, m in ALL_MESSAGES.items() if m.kind != "header"}
    assert {m.name for api in apis.values() for m in (api.request, api.response)} == declared
    assert all(isinstance(key, ApiKey) and api.key == key for key, api in apis.items())


def test_schemas_are_built_when_an_api_is_first_looked_up():
    code = """import json, sys
from broker_lite.protocol import API_SCHEMAS, ApiKey
def built():
    return sorted(m.rsplit(".", 1)[1] for m in sys.modules
                  if m.startswith("broker_lite.protocol.messages."))
before = built()
API_SCHEMAS[ApiKey.METADATA]
print(json.dumps([before, built(), len(API_SCHEMAS), built()]))"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    before, after_metadata, count, after_len = json.loads(out)
    assert (before, after_metadata, count, after_len) == ([], ["metadata"], 59, ["metadata"])
