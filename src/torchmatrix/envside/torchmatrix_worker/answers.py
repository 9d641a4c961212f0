"""What a pair's process answers, checked: a probe's result, a script's exit, an error saying what is wrong."""

import json
import math
import os
import struct
import sys

from .protocol import (
    ERROR,
    FAIL,
    MAX_INT_DIGITS,
    MAX_MESSAGE,
    MAX_METRICS_BYTES,
    OUTCOMES_A_CHILD_MAY_SEND,
    OUTCOMES_A_PROBE_MAY_RETURN,
    PASS,
    UNAVAILABLE,
)


def checked(result):
    """Turn what a probe returned into a record, or an error record saying what is wrong with it."""
    if not isinstance(result, dict):
        return malformed("run() returned {} instead of a dict".format(type(result).__name__))
    outcome = result.get("outcome")
    if outcome not in OUTCOMES_A_PROBE_MAY_RETURN:
        return malformed("run() returned outcome {!r}; expected 'pass' or 'fail'".format(outcome))
    metrics = result.get("metrics", {})
    if not isinstance(metrics, dict):
        return malformed("run() returned metrics of type {}; expected a dict".format(type(metrics).__name__))
    try:
        metrics = json_safe(metrics)
    except (TypeError, ValueError) as error:
        return malformed("run() returned metrics that are not plain data: {}".format(error))
    size = len(json.dumps(metrics))
    if size > MAX_METRICS_BYTES:
        return malformed(
            "run() returned {:.1f} MB of metrics; the limit is {} MB: store what was checked "
            "(observed, expected, error), not whole tensors".format(size / (1 << 20), MAX_METRICS_BYTES >> 20)
        )
    return {"outcome": outcome, "metrics": metrics, "message": tail(str(result.get("message", "")))}


def malformed(message):
    return {"outcome": ERROR, "metrics": {}, "message": "malformed result: " + message}


def json_safe(value, depth=0):
    """Plain JSON data; non-finite floats become the strings 'nan', 'inf', '-inf', and integers wider than a result
    file holds (:data:`MAX_INT_DIGITS`) their digits as text."""
    if depth > 20:
        raise ValueError("nested too deeply")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**MAX_INT_DIGITS else wide_int_text(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [json_safe(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item, depth + 1) for key, item in value.items()}
    raise TypeError("{!r} of type {}".format(value, type(value).__name__)[:200])


def wide_int_text(value):
    """An integer too wide for a result file, as text: its digits, or its width where Python will not print them."""
    try:
        return str(value)
    except ValueError:  # Python 3.11 and newer print at most 4300 digits
        return "an integer of {} bits".format(value.bit_length())


def describe(error):
    return tail("{}: {}".format(type(error).__name__, said_of(error)))


def said_of(value):
    """``str(value)``, or, where that fails (an exception's ``__str__`` that raises), what python's traceback prints
    in its place."""
    try:
        return str(value)
    except Exception:
        return "<exception str() failed>"


def tail(text):
    return text if len(text) <= MAX_MESSAGE else "…" + text[-MAX_MESSAGE:]


def pair_answer(answer):
    """A record as a pair's process sent it, checked: a malformed one is an error saying so."""
    if not (
        answer.get("outcome") in OUTCOMES_A_CHILD_MAY_SEND
        and isinstance(answer.get("metrics"), dict)
        and isinstance(answer.get("message"), str)
    ):
        return malformed("the probe's process sent something that is not a record")
    return {"outcome": answer["outcome"], "metrics": answer["metrics"], "message": tail(answer["message"])}


def unavailable(reason):
    return {"outcome": UNAVAILABLE, "metrics": {}, "message": reason, "read": []}


EXIT_SKIP = 125
"""The exit status that says "this does not apply here", as `git bisect run` reads it."""


def exit_status(exit):
    """The exit status ``python`` gives ``sys.exit(code)``: None 0, a number itself, anything else 1 (python prints
    it: :func:`print_exit_code`)."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        code = int(exit.code)  # not the script's own int's arithmetic
        return code & 0xFF if -C_LONG <= code < C_LONG else 0xFF  # python reads it as a C long: one too large is -1
    return 1


def print_exit_code(exit):
    """Print the code of ``sys.exit(code)`` that is neither None nor a number, as python does: on ``sys.stderr``, or
    on the process's own stderr where that is None; one that cannot be printed (a closed stream, a ``__str__`` that
    raises) is passed over."""
    if exit.code is None or isinstance(exit.code, int):
        return
    try:
        text = str(exit.code) + "\n"
        if sys.stderr is None:
            os.write(2, text.encode("utf-8", "backslashreplace"))
        else:
            sys.stderr.write(text)
    except Exception:  # noqa: S110 - python clears the error, and exits with 1 all the same
        pass


C_LONG = 2 ** (8 * struct.calcsize("l") - 1)
"""Where a C ``long`` ends, as ``sys.exit(code)`` reads its code."""


def exit_answer(status):
    return {"outcome": exit_outcome(status), "metrics": {"exit_code": status}, "message": ""}


def exit_outcome(status):
    """An exit status as `git bisect run` reads it: 0 good, 125 skip, 1-127 bad; above 127 it gives no verdict."""
    if status == 0:
        return PASS
    if status == EXIT_SKIP:
        return UNAVAILABLE
    return FAIL if 0 < status < 128 else ERROR
