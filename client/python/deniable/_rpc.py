"""gRPC plumbing shared by Reporter and QueryClient: a channel and typed unary calls."""
import grpc

from deniable.errors import DeniableError


# As the C++ transport: reconnect within 5 s after an outage, so a queue drains soon after.
RECONNECT_OPTIONS = (("grpc.max_reconnect_backoff_ms", 5000),
                     ("grpc.initial_reconnect_backoff_ms", 200),
                     ("grpc.min_reconnect_backoff_ms", 200))


def make_channel(target, credentials=None, bearer_token=None, insecure=False, options=()):
    """A channel to target ("host:port"). credentials: grpc.ChannelCredentials (TLS); or
    insecure=True for plaintext (local development). bearer_token: sent as
    "authorization: Bearer ..." on every call (TLS only, as gRPC requires). The channel
    reconnects at most 5 s after the collector comes back (RECONNECT_OPTIONS)."""
    options = list(RECONNECT_OPTIONS) + list(options)
    if not target:
        raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT, "target: must be host:port")
    if insecure:
        if bearer_token:
            raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                                "bearer_token: sent only over TLS; pass credentials")
        return grpc.insecure_channel(target, options=options)
    if credentials is None:
        credentials = grpc.ssl_channel_credentials()
    if bearer_token:
        credentials = grpc.composite_channel_credentials(
            credentials, grpc.access_token_call_credentials(bearer_token))
    return grpc.secure_channel(target, credentials, options=options)


def unary(channel, service, method, request_type, response_type):
    return channel.unary_unary(f"/deniable.v1.{service}/{method}",
                               request_serializer=request_type.SerializeToString,
                               response_deserializer=response_type.FromString)


def call(stub, request, timeout):
    """Calls stub; a gRPC error becomes DeniableError with the same code. wait_for_ready: while
    the collector is unreachable the call waits (up to `timeout`) for the channel to connect
    instead of failing at once; with fail-fast calls, grpcio 1.51 took about 10 s to notice a
    collector that came back (measured), so a queue drained late after an outage."""
    try:
        return stub(request, timeout=timeout, wait_for_ready=True)
    except grpc.RpcError as e:
        raise DeniableError(e.code(), e.details() or "") from None
