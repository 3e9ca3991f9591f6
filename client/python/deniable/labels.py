"""Report labels: the collector's rules (common/include/deniable/common/labels.h), checked by the
SDK before a report is randomized or queued, with the C++ SDK's messages.

At most 4 labels per report; keys match [a-z][a-z0-9_]{0,31}; values [A-Za-z0-9_.:-]{1,32}.
Labels travel and are stored in the clear: never identifying or free-text values."""
import json
import re
from typing import Dict, Mapping, Optional

import grpc

from deniable.errors import DeniableError

MAX_LABELS = 4
_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}")
_VALUE = re.compile(r"[A-Za-z0-9_.:-]{1,32}")
_ECHO = 64  # characters of a refused key or value repeated in a message


def _echo(text: str) -> str:
    shown = json.dumps(text[:_ECHO], ensure_ascii=True)
    return shown if len(text) <= _ECHO else f"{shown}... ({len(text)} characters)"


def merged(reporter_labels: Mapping[str, str],
           labels: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """The labels of one report: the reporter's, with `labels` (this report's) added, a key in
    both taking this report's value. When `labels` is given the merged set is checked; raises
    DeniableError(INVALID_ARGUMENT) "labels: at most 4 labels, but has N",
    "labels[<key>]: key must match ..." or "labels[\"key\"]: value must match ..."."""
    if not labels:
        return dict(reporter_labels)
    if not isinstance(labels, Mapping):
        raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                            "labels: must be a mapping of str to str")
    out = dict(reporter_labels)
    out.update(labels)
    if len(out) > MAX_LABELS:
        raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                            f"labels: at most {MAX_LABELS} labels, but has {len(out)}")
    for key in sorted(out, key=str):
        value = out[key]
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                                f"labels[{_echo(str(key))}]: key must match [a-z][a-z0-9_]{{0,31}}")
        if not isinstance(value, str) or not _VALUE.fullmatch(value):
            raise DeniableError(grpc.StatusCode.INVALID_ARGUMENT,
                                f"labels[\"{key}\"]: value must match [A-Za-z0-9_.:-]{{1,32}}, "
                                f"but is {_echo(str(value))}")
    return out
