#!/usr/bin/python3
"""Server reflection is off by default and on with --reflection.

Calls grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo with a hand-encoded
list_services request (field 7, empty string: bytes 0x3a 0x00) and checks that the answer names
the Deniable services; without --reflection the method is UNIMPLEMENTED.
Usage: reflection_test.py SERVER_BINARY
"""
import os
import sys
import tempfile

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402

METHOD = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
LIST_SERVICES = b"\x3a\x00"


def list_services(target):
    with grpc.insecure_channel(target) as channel:
        call = channel.stream_stream(METHOD, request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
        return b"".join(call(iter([LIST_SERVICES]), timeout=10))


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_reflection_")
    for flags, expect_on in (((), False), (("--reflection",), True)):
        server, target = start_server(server_bin, os.path.join(work, "r.db"),
                                      os.path.join(work, "server.log"), *flags)
        try:
            if expect_on:
                answer = list_services(target)
                for name in (b"deniable.v1.ReportService", b"deniable.v1.QueryService",
                             b"grpc.health.v1.Health"):
                    check(name in answer, f"{name!r} missing from {answer!r}")
                print("with --reflection: services listed")
            else:
                try:
                    list_services(target)
                    raise AssertionError("reflection answered without --reflection")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNIMPLEMENTED, e.code())
                print("without --reflection: UNIMPLEMENTED")
        finally:
            server.terminate()
            server.wait(timeout=30)
    print("reflection: OK")


if __name__ == "__main__":
    main()
