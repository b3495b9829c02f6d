#!/usr/bin/python3
"""The test oracle of Modbus writes, independent of tagd: computes the registers a written value
must leave in the device with Python's struct module, and (over TCP) reads the registers back
with a pymodbus client.

Input (argv[1]): JSON {"host": "127.0.0.1", "port": N, "unit": 1, "specs": [...]} where each spec
is {"address": A, "type": "int32", "order": "CDAB", "value": "-5" | 1.5 | "text",
"scale": 1, "offset": 0, "length": N (strings)}; 64-bit integers come as decimal strings so that
they reach Python exactly. Without "host", nothing is read (RTU: the test reads the server's
store instead).
Output (stdout): JSON list of {"expected": [registers], "actual": [registers] | null}.
"""

import json
import struct
import sys
import types

FORMAT = {
    "int16": ">h",
    "uint16": ">H",
    "int32": ">i",
    "uint32": ">I",
    "int64": ">q",
    "uint64": ">Q",
    "float32": ">f",
    "float64": ">d",
}


def big_endian_bytes(spec):
    kind = spec["type"]
    if kind == "string":
        return spec["value"].encode("latin-1").ljust(2 * spec["length"], b"\0")
    value = spec["value"]
    scale = spec.get("scale", 1)
    offset = spec.get("offset", 0)
    if kind.startswith("float"):
        raw = (float(value) - offset) / scale if (scale, offset) != (1, 0) else float(value)
    elif isinstance(value, str):
        raw = int(value)
    elif (scale, offset) != (1, 0):
        raw = round((value - offset) / scale)
    else:
        raw = int(value)
    return struct.pack(FORMAT[kind], raw)


def in_order(data, order, kind):
    """ABCD as packed; CDAB words reversed; BADC bytes swapped in each word; DCBA both."""
    words = [data[i : i + 2] for i in range(0, len(data), 2)]
    if kind != "string" and order in ("CDAB", "DCBA"):
        words.reverse()
    if order in ("BADC", "DCBA"):
        words = [w[::-1] for w in words]
    return [w[0] << 8 | w[1] for w in words]


def main():
    request = json.loads(sys.argv[1])
    client = None
    if request.get("host"):
        # pymodbus.client imports serial_asyncio (python3-serial-asyncio, not always installed)
        # for its serial client, which the oracle never uses.
        if "serial_asyncio" not in sys.modules:
            try:
                import serial_asyncio  # noqa: F401
            except ImportError:
                stub = types.ModuleType("serial_asyncio")
                stub.create_serial_connection = None
                sys.modules["serial_asyncio"] = stub
        from pymodbus.client import ModbusTcpClient

        client = ModbusTcpClient(request["host"], port=request["port"])
        client.connect()
    out = []
    for spec in request["specs"]:
        expected = in_order(big_endian_bytes(spec), spec["order"], spec["type"])
        actual = None
        if client is not None:
            answer = client.read_holding_registers(
                spec["address"], len(expected), slave=request.get("unit", 1)
            )
            actual = list(answer.registers)
        out.append({"expected": expected, "actual": actual})
    if client is not None:
        client.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
