#!/usr/bin/python3
"""Encodes values into Modbus registers with pymodbus's BinaryPayloadBuilder, an encoder
independent of the driver's decoder. Byte order names: A = most significant byte; the word
order (CDAB, DCBA) and the byte order within words (BADC, DCBA) map to the builder's
wordorder and byteorder. Strings: two characters per register, first character in the high
byte (ABCD, CDAB) or the low byte (BADC, DCBA), padded with NUL to `length` registers.

Input (argv[1]): JSON list of {"type": "float32", "order": "CDAB", "value": 1.5, "length": N}.
Output (stdout): JSON list of register lists, one per input value.
"""

import json
import sys

from pymodbus.constants import Endian
from pymodbus.payload import BinaryPayloadBuilder

ADD = {
    "int16": "add_16bit_int",
    "uint16": "add_16bit_uint",
    "int32": "add_32bit_int",
    "uint32": "add_32bit_uint",
    "int64": "add_64bit_int",
    "uint64": "add_64bit_uint",
    "float32": "add_32bit_float",
    "float64": "add_64bit_float",
}


def encode(spec):
    order = spec["order"]
    if spec["type"] == "string":
        raw = spec["value"].encode("latin-1").ljust(2 * spec["length"], b"\0")
        registers = []
        for i in range(0, len(raw), 2):
            high, low = raw[i], raw[i + 1]
            if order in ("BADC", "DCBA"):
                high, low = low, high
            registers.append(high << 8 | low)
        return registers
    builder = BinaryPayloadBuilder(
        byteorder=Endian.Little if order in ("BADC", "DCBA") else Endian.Big,
        wordorder=Endian.Little if order in ("CDAB", "DCBA") else Endian.Big,
    )
    getattr(builder, ADD[spec["type"]])(spec["value"])
    return builder.to_registers()


print(json.dumps([encode(spec) for spec in json.loads(sys.argv[1])]))
