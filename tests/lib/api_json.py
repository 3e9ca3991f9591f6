"""The HTTP JSON API's answers beside protobuf's proto3 JSON (the CLI's --json, gRPC).

The HTTP API prints int64 counts as JSON numbers and values the server does not have as null
(server/http/json_print.h); proto3's mapping prints int64 as strings and every scalar at its
default. same_answer(proto3, api) says whether two answers carry the same message.
"""


def same_answer(proto3, api):
    """True when `api` (HTTP JSON) is `proto3` (protobuf JSON) with numbers and nulls as above."""
    if api is None:  # a missing value: proto3 printed the field's default
        return proto3 in (0, "0", "", False) or (isinstance(proto3, str)
                                                 and proto3.endswith("_UNSPECIFIED"))
    if isinstance(api, dict):
        return (isinstance(proto3, dict) and proto3.keys() == api.keys()
                and all(same_answer(proto3[k], api[k]) for k in api))
    if isinstance(api, list):
        return (isinstance(proto3, list) and len(proto3) == len(api)
                and all(same_answer(a, b) for a, b in zip(proto3, api)))
    if isinstance(api, int) and not isinstance(api, bool) and isinstance(proto3, str):
        return proto3 == str(api)  # an int64 as a string in proto3 JSON
    return proto3 == api
