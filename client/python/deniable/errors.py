"""Errors of the SDK: a gRPC status code and a message naming the field."""
import grpc

StatusCode = grpc.StatusCode


class DeniableError(Exception):
    """Raised by the SDK. `code` is a grpc.StatusCode; `message` names the field or cause, and
    for an unreachable collector says what to do ("cannot reach 127.0.0.1:50051: ...")."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


def code_from_number(number: int) -> grpc.StatusCode:
    """grpc.StatusCode for a numeric code (ReportRejection.code); UNKNOWN if out of range."""
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code
    return grpc.StatusCode.UNKNOWN


def rejection_code(number: int) -> grpc.StatusCode:
    """The code of a ReportRejection: UNKNOWN for 0 (a rejection is never OK) and for a number
    that is no code, as the C++ SDK reads it (tests/conformance/delivery_contract.json)."""
    code = code_from_number(number)
    return grpc.StatusCode.UNKNOWN if code == grpc.StatusCode.OK else code


def is_permanent_batch_error(code: grpc.StatusCode) -> bool:
    """The delivery contract's one traits function: only INVALID_ARGUMENT is permanent (docs/sdk.md
    "Delivery contract"; tests/conformance/delivery_contract.json)."""
    return code == grpc.StatusCode.INVALID_ARGUMENT
