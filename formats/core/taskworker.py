"""One local worker process of `executors.LocalProcesses` (started isolated, formats/core/childproc.py):

    python -I ... -m arrayscope.formats.core.taskworker

It reads tasks from stdin and writes results to stdout, each a pickle behind its 8-byte
length: a task is `(fn, item)`, a result `(True, fn(item))` or `(False, the exception)`.
It ends at the end of stdin, or when its parent is gone."""
from __future__ import annotations

import os
import pickle
import struct
import sys
from typing import Any, BinaryIO, Optional

_LEN = struct.Struct("<Q")


def send(out: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_LEN.pack(len(data)))
    out.write(data)
    out.flush()


def receive(inp: BinaryIO) -> Optional[Any]:
    """The next message, None at the end of the stream. The stream comes from our own
    parent or child, never from a dataset."""
    head = inp.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    data = inp.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


def _result(fn, item) -> tuple:
    try:
        return True, fn(item)
    except Exception as e:  # noqa: BLE001 - the caller re-raises it
        return False, e


def main() -> int:
    from . import compiled
    from .childproc import exit_with_parent

    exit_with_parent()
    compiled.own_process()   # our worker: numba's cache in the user's cache folder
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr   # a stray print of a task must not corrupt the results
    while True:
        task = receive(inp)
        if task is None:
            return 0
        fn, item = task
        res = _result(fn, item)
        try:
            send(out, res)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            send(out, (False, RuntimeError(f"result not picklable: {type(e).__name__}: {e}"
                                           if res[0] else f"{type(res[1]).__name__}: {res[1]}")))


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)
