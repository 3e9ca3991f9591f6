"""gRPC plumbing shared by Reporter and QueryClient: a channel, typed unary calls, and errors
that say what to do when the collector cannot be reached."""
import dataclasses
import os
from typing import Any, Callable, Optional, Sequence, Tuple

import grpc

from deniable.errors import DeniableError

# As the C++ transport: reconnect within 5 s after an outage, so a queue drains soon after.
RECONNECT_OPTIONS = (("grpc.max_reconnect_backoff_ms", 5000),
                     ("grpc.initial_reconnect_backoff_ms", 200),
                     ("grpc.min_reconnect_backoff_ms", 200))

# After a call that waited for the channel and failed (DEADLINE_EXCEEDED or UNAVAILABLE), one
# fail-fast attempt of at most this many seconds asks gRPC why the channel is not connected:
# wait_for_ready calls only ever say "Deadline Exceeded".
PROBE_TIMEOUT_SECONDS = 0.5

LOCAL_TARGET = "127.0.0.1:50051"  # deniable-server's default --listen


def local_target(target: Optional[str]) -> str:
    """Development mode's address: target, else $DENIABLE_TARGET (as the CLI), else
    127.0.0.1:50051 (deniable-server's default --listen)."""
    return target or os.environ.get("DENIABLE_TARGET") or LOCAL_TARGET


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where a channel made by make_channel goes, for error messages: target "host:port", tls
    False for plaintext. (Not grpc.Channel.subscribe to watch the connection: its polling
    thread kept a program whose channel was never closed from exiting.)"""
    target: str
    tls: bool


def make_channel(target: Optional[str], credentials: Optional[grpc.ChannelCredentials] = None,
                 bearer_token: Optional[str] = None, insecure: bool = False,
                 options: Sequence[Tuple[str, Any]] = ()) -> grpc.Channel:
    """A channel to target ("host:port"). credentials: grpc.ChannelCredentials (TLS); or
    insecure=True for plaintext (local development). bearer_token: sent as
    "authorization: Bearer ..." on every call (TLS only, as gRPC requires). The channel
    reconnects at most 5 s after the collector comes back (RECONNECT_OPTIONS)."""
    all_options = list(RECONNECT_OPTIONS) + list(options)
    if not target:
        raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT, "target: must be host:port")
    if insecure:
        if bearer_token:
            raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                                "bearer_token: sent only over TLS; pass credentials")
        return grpc.insecure_channel(target, options=all_options)
    if credentials is None:
        credentials = grpc.ssl_channel_credentials()
    if bearer_token:
        credentials = grpc.composite_channel_credentials(
            credentials, grpc.access_token_call_credentials(bearer_token))
    return grpc.secure_channel(target, credentials, options=all_options)


@dataclasses.dataclass(frozen=True)
class Method:
    """A unary method on a channel, and where the channel goes (None: a caller's channel)."""
    stub: Callable[..., Any]
    where: Optional[Endpoint]


def unary(channel: Any, service: str, method: str, request_type: Any, response_type: Any,
          where: Optional[Endpoint] = None) -> Method:
    return Method(channel.unary_unary(f"/deniable.v1.{service}/{method}",
                                      request_serializer=request_type.SerializeToString,
                                      response_deserializer=response_type.FromString), where)


def explain_unreachable(where: Optional[Endpoint], details: str) -> Optional[str]:
    """What to do, for gRPC's last transport error `details`; None when it is not one."""
    target = where.target if where else "the collector"
    lowered = details.lower()
    if "wrong version number" in lowered or "wrong_version_number" in lowered:
        return (f"cannot reach {target} over TLS: the server there speaks plaintext (TLS "
                "handshake failed: wrong version number). For a local development server "
                "started without --tls_cert_file, pass insecure=True (or use "
                "deniable.Reporter.local()); otherwise start the server with TLS. gRPC: "
                f"{details}")
    if "ssl handshake failed" in lowered:
        return (f"cannot reach {target} over TLS: the TLS handshake failed (check the server's "
                f"certificate and the credentials passed). gRPC: {details}")
    if where is not None and not where.tls and ("socket closed" in lowered
                                                or "connection reset" in lowered
                                                or "end of tcp stream" in lowered):
        return (f"cannot reach {target} in plaintext: the server closed the connection (does "
                "it expect TLS? then pass credentials instead of insecure=True). gRPC: "
                f"{details}")
    if "http1.x server" in lowered or "failed parsing http/2" in lowered:
        # Something answered gRPC's HTTP/2 preface in HTTP/1 (libmicrohttpd's 400): as the C++
        # transport says it (client/src/unreachable.cc).
        return (f"cannot reach {target}: an HTTP/1.x server answered there, not gRPC. That is "
                "the collector's HTTP listener (--http_listen, for the JavaScript SDK and the "
                "dashboard); give the SDK the gRPC --listen address (50051 by default). gRPC: "
                f"{details}")
    if "failed to connect" in lowered or "connection refused" in lowered \
            or "dns resolution failed" in lowered:
        return (f"cannot reach {target}: nothing answered there (is deniable-server running, "
                "and is this its gRPC --listen address? the HTTP listener's port is for the "
                f"JavaScript SDK). gRPC: {details}")
    return None


def call(method: Method, request: Any, timeout: float) -> Any:
    """Calls method; a gRPC error becomes DeniableError with the same code. wait_for_ready: while
    the collector is unreachable the call waits (up to `timeout`) for the channel to connect
    instead of failing at once; with fail-fast calls, grpcio 1.51 took about 10 s to notice a
    collector that came back (measured), so a queue drained late after an outage. When such a
    call fails unconnected, one fail-fast attempt (PROBE_TIMEOUT_SECONDS) reads the transport's
    last error (only on a channel made by make_channel; against a connected but slow collector
    it ends at DEADLINE_EXCEEDED as before), and the
    DeniableError (UNAVAILABLE) says what to do: "cannot reach
    127.0.0.1:50051: ...", or TLS against a plaintext server. The attempt re-sends the same
    request (report ids are counted once); its answer is returned when it succeeds."""
    try:
        return method.stub(request, timeout=timeout, wait_for_ready=True)
    except grpc.RpcError as e:
        code, details = e.code(), e.details() or ""
    where = method.where
    if where is not None and \
            code in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
        try:
            return method.stub(request, timeout=min(timeout, PROBE_TIMEOUT_SECONDS),
                               wait_for_ready=False)
        except grpc.RpcError as probe:
            if probe.code() == grpc.StatusCode.UNAVAILABLE:
                explained = explain_unreachable(method.where, probe.details() or "")
                if explained is not None:
                    raise DeniableError(grpc.StatusCode.UNAVAILABLE, explained) from None
    raise DeniableError(code, details)
