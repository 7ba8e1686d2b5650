"""Message bodies read straight from canonical CBOR bytes.

The codec's full checks decode a payload with cbor2, build the message (catalogue.from_body)
and encode it again to prove the bytes canonical: three passes, 28 us for a MotorCommand
here, most of an agent's LAN cost. `read_body` is one pass, compiled per class from the same
specs: it accepts only a body in exactly the form our encoder writes (map heads with the
field count, the keys as single bytes in ascending order, integers in their shortest head,
floats as float64, lengths in their shortest head, nothing after it) and applies the same
value checks as from_body (`catalogue._value_check`). Anything else, valid or not, gives
None and the codec's full checks decide, so this decides nothing new: what it accepts, the
full checks accept as the same message. (An integer in a float field, which the full checks
accept, takes the full checks.)
"""

from __future__ import annotations

import struct
from typing import Any

from foosball.wire.catalogue import _value_check, specs

_DOUBLE = struct.Struct(">d").unpack_from
_FLOAT64 = 0xFB
_FALSE, _TRUE = 0xF4, 0xF5
# The argument's head (info 24..27) -> its smallest value: anything less is not shortest.
_SMALLEST = {24: 24, 25: 0x100, 26: 0x10000, 27: 0x1_0000_0000}


class _NotOurs(ValueError):
    """Not in the form our encoder writes (it may still be valid)."""


def _argument(data: bytes, at: int, major: int) -> tuple[int, int]:
    """The argument of the head of major type `major` at `at`, in its shortest form, and
    the index after the head."""
    head = data[at]
    if head >> 5 != major:
        raise _NotOurs
    info = head & 0x1F
    if info < 24:
        return info, at + 1
    if info > 27:
        raise _NotOurs
    end = at + 1 + (1 << (info - 24))
    if end > len(data):
        raise _NotOurs
    value = int.from_bytes(data[at + 1 : end], "big")
    if value < _SMALLEST[info]:
        raise _NotOurs
    return value, end


def _integer(data: bytes, at: int) -> tuple[int, int]:
    if data[at] >> 5 == 1:  # negative: -1 - argument
        value, at = _argument(data, at, 1)
        return -1 - value, at
    return _argument(data, at, 0)


def _compile(cls: type) -> Any:
    """cls's reader: (bytes, index) -> (message, index after it), None when a value check
    fails, _NotOurs/IndexError when the bytes are not in our form. Cached on the class."""
    cached = cls.__dict__.get("_compiled_reader")
    if cached is not None:
        return cached
    fields_ = specs(cls)
    ns: dict[str, Any] = {"CLS": cls, "D": _DOUBLE, "INT": _integer, "ARG": _argument,
                          "NOT": _NotOurs}
    if len(fields_) >= 24 or any(spec.key >= 24 for _, spec in fields_):
        def read(p: bytes, at: int) -> Any:  # heads of more than one byte: not compiled
            raise _NotOurs

        cls._compiled_reader = read  # type: ignore[attr-defined]
        return read
    if all(_fixed(spec) for _, spec in fields_):
        return _compile_fixed(cls)
    lines = ["def read(p, at):",
             f"    if p[at] != {0xA0 + len(fields_)}: raise NOT",  # map(n), one byte
             "    at += 1"]
    for i, (_, spec) in enumerate(fields_):
        v, kind = f"v{i}", spec.kind
        lines += [f"    if p[at] != {spec.key}: raise NOT", "    at += 1"]
        if kind == "float":
            lines += [f"    if p[at] != {_FLOAT64}: raise NOT", f"    {v}, = D(p, at + 1)",
                      "    at += 9"]
        elif kind in ("int", "enum"):
            lines += [f"    {v}, at = INT(p, at)"]
        elif kind == "bool":
            lines += ["    b = p[at]", f"    if b != {_FALSE} and b != {_TRUE}: raise NOT",
                      f"    {v} = b == {_TRUE}", "    at += 1"]
        elif kind in ("str", "bytes"):
            lines += [f"    n, at = ARG(p, at, {3 if kind == 'str' else 2})",
                      "    end = at + n",
                      "    if end > len(p): raise NOT",
                      f"    {v} = p[at:end]{'.decode()' if kind == 'str' else ''}",
                      "    at = end"]
        elif kind == "floats":
            lines += ["    n, at = ARG(p, at, 4)", f"    {v} = []",
                      "    for _ in range(n):",
                      f"        if p[at] != {_FLOAT64}: raise NOT",
                      f"        {v}.append(D(p, at + 1)[0])",
                      "        at += 9"]
        else:
            assert kind == "records" and spec.record is not None
            ns[f"REC_{i}"] = _compile(spec.record)
            lines += ["    n, at = ARG(p, at, 4)",
                      f"    if not 1 <= n <= {spec.max_len}: return None",
                      f"    {v} = []",
                      "    for _ in range(n):",
                      f"        got = REC_{i}(p, at)",
                      "        if got is None: return None",
                      f"        {v}.append(got[0])",
                      "        at = got[1]",
                      f"    {v} = tuple({v})"]
            continue  # each record checked by its own reader
        lines += ["    " + line for line in _value_check(spec, v, ns, str(i), False)]
    lines.append(f"    return CLS({', '.join(f'v{i}' for i in range(len(fields_)))}), at")
    return _define(cls, lines, ns)


def _define(cls: type, lines: list[str], ns: dict[str, Any]) -> Any:
    """The reader `lines` define, cached on `cls`."""
    exec("\n".join(lines), ns)  # our own specs: no outside text reaches it
    cls._compiled_reader = ns["read"]  # type: ignore[attr-defined]
    return ns["read"]


def _fixed(spec: Any) -> bool:
    """Whether the field is always the same number of bytes in our form: a float (fb and
    eight bytes), a flag, an integer or choice whose every value fits its head's byte."""
    if spec.kind in ("float", "bool"):
        return True
    if spec.kind == "int":
        return spec.low >= 0 and spec.high < 24
    if spec.kind == "enum":
        return all(0 <= member < 24 for member in spec.enum)
    return False


def _compile_fixed(cls: type) -> Any:
    """The reader of a record whose fields are all _fixed (an AxisTarget, a RodTarget, a
    Heartbeat): the whole map is one struct, its constant bytes compared at once."""
    fields_ = specs(cls)
    layout = ">B"  # the map's head
    constants = [0xA0 + len(fields_)]  # what the constant bytes must be, in order
    where = [0]  # their places in the unpacked tuple
    values = []  # (place, spec)
    for _, spec in fields_:
        layout += "B"
        where.append(len(layout) - 2)
        constants.append(spec.key)
        if spec.kind == "float":
            layout += "Bd"
            where.append(len(layout) - 3)
            constants.append(_FLOAT64)
        else:
            layout += "B"
        values.append((len(layout) - 2, spec))
    unpack = struct.Struct(layout)
    ns: dict[str, Any] = {"CLS": cls, "UNPACK": unpack.unpack_from, "NOT": _NotOurs,
                          "CONSTANTS": tuple(constants)}
    lines = ["def read(p, at):",
             "    row = UNPACK(p, at)",  # (not `t`: the value checks use that name)
             f"    if ({', '.join(f'row[{i}]' for i in where)},) != CONSTANTS: raise NOT"]
    for i, (place, spec) in enumerate(values):
        v = f"v{i}"
        lines.append(f"    {v} = row[{place}]")
        if spec.kind == "bool":
            lines += [f"    if {v} != {_FALSE} and {v} != {_TRUE}: raise NOT",
                      f"    {v} = {v} == {_TRUE}"]
            continue
        if spec.kind != "float":
            # A longer head or not an integer (the range check refuses it too).
            lines.append(f"    if {v} >= 24: raise NOT")
        lines += ["    " + line for line in _value_check(spec, v, ns, str(i), False)]
    lines.append(f"    return CLS({', '.join(f'v{i}' for i in range(len(values)))}), "
                 f"at + {unpack.size}")
    return _define(cls, lines, ns)


def read_body(cls: type, data: bytes, at: int) -> Any:
    """The message of class `cls` whose body starts at `at` and ends where `data` does, when
    it is in our canonical form and passes the value checks; None otherwise (see above)."""
    try:
        got = _compile(cls)(data, at)
    except (_NotOurs, IndexError, UnicodeDecodeError, struct.error):
        return None
    if got is None or got[1] != len(data):
        return None
    return got[0]
