#!/usr/bin/python3
"""A Modbus server for tests, built on Debian's python3-pymodbus (3.0): an implementation
independent of modbus-serial. Served over TCP (127.0.0.1) or as RTU on a serial device (one end
of a socat pty pair). The data store is zero-based (zero_mode=True): address 0 is the first
value of each list; reading past the end of a list answers "illegal data address".

Arguments:
  --tcp PORT            serve Modbus TCP on 127.0.0.1:PORT (0 picks a free port)
  --rtu DEVICE          serve Modbus RTU on DEVICE
  --baud N --parity N|E|O --bytesize 7|8 --stopbits 1|2   serial settings (RTU)
  --unit N              unit id served (default 1)
  --data JSON           {"co": [0, 1], "di": [...], "hr": [...], "ir": [...]}
  --no-mask-write       answer FC 22 (Mask Write Register) with exception 1, illegal function,
                        like the many devices that lack it
Control: JSON lines on stdin.
  {"op": "set", "table": "hr", "address": 0, "values": [1, 2]}
  {"op": "get", "table": "hr", "address": 0, "count": 2}
Events: JSON lines on stdout.
  {"event": "listening", "port": N} (TCP) or {"event": "listening", "device": "..."} (RTU)
  {"event": "set"}
  {"event": "get", "values": [1, 2]}
The server exits when stdin closes.
"""

import argparse
import asyncio
import json
import logging
import os
import sys
import threading
import types


def install_serial_transport():
    """pymodbus.server gets its serial transport from serial_asyncio (python3-serial-asyncio).
    The peer always puts this minimal one on pyserial in its place, installed or not:

    - Debian ships python3-serial-asyncio separately, only recommended by python3-pymodbus, so
      whether it is there depends on how pymodbus was installed (CI installs without recommends).
    - serial_asyncio 0.6 sets the port's timeouts after opening it, and each such change makes
      pyserial write the whole termios again. A pseudo-terminal keeps no parity (Linux drops
      PARENB), so that second write asks for parity alone and the kernel refuses it with EINVAL
      (seen on 6.18). pymodbus 3.0 logs that at debug level and serves nothing: the peer said
      "listening" and the driver's requests went unanswered. This transport configures the port
      once, in the constructor, where the speed changes too and the kernel accepts the rest.
    """
    import serial

    class SerialTransport(asyncio.Transport):
        def __init__(self, loop, protocol, port):
            super().__init__()
            self._loop = loop
            self._protocol = protocol
            self.serial = port
            self._closing = False
            loop.add_reader(port.fileno(), self._read)

        def _read(self):
            try:
                data = os.read(self.serial.fileno(), 4096)
            except OSError:
                data = b""
            if data:
                self._protocol.data_received(data)

        def write(self, data):
            os.write(self.serial.fileno(), data)

        def is_closing(self):
            return self._closing

        def close(self):
            if self._closing:
                return
            self._closing = True
            self._loop.remove_reader(self.serial.fileno())
            self.serial.close()

    async def create_serial_connection(loop, protocol_factory, url, **kwargs):
        port = serial.serial_for_url(url, **kwargs)
        protocol = protocol_factory()
        transport = SerialTransport(loop, protocol, port)
        loop.call_soon(protocol.connection_made, transport)
        return transport, protocol

    module = types.ModuleType("serial_asyncio")
    module.create_serial_connection = create_serial_connection
    sys.modules["serial_asyncio"] = module


install_serial_transport()

from pymodbus.datastore import (  # noqa: E402
    ModbusSequentialDataBlock,
    ModbusServerContext,
    ModbusSlaveContext,
)
from pymodbus.server.async_io import ModbusSerialServer, ModbusTcpServer  # noqa: E402
from pymodbus.transaction import ModbusRtuFramer, ModbusSocketFramer  # noqa: E402

FUNCTION = {"co": 1, "di": 2, "hr": 3, "ir": 4}


def drop_mask_write(server):
    """Unknown function codes decode as IllegalFunctionRequest, answered with exception 1."""
    server.decoder._ServerDecoder__lookup.pop(22, None)


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def watch_stdin(loop, slave, done):
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        if request.get("op") == "set":
            def apply(request=request):
                slave.setValues(FUNCTION[request["table"]], request["address"], request["values"])
                emit({"event": "set"})
            loop.call_soon_threadsafe(apply)
        elif request.get("op") == "get":
            def read(request=request):
                values = slave.getValues(
                    FUNCTION[request["table"]], request["address"], request["count"]
                )
                emit({"event": "get", "values": [int(v) for v in values]})
            loop.call_soon_threadsafe(read)
    loop.call_soon_threadsafe(done.set)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tcp", type=int)
    parser.add_argument("--rtu")
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--parity", default="N")
    parser.add_argument("--bytesize", type=int, default=8)
    parser.add_argument("--stopbits", type=int, default=1)
    parser.add_argument("--unit", type=int, default=1)
    parser.add_argument("--data", default="{}")
    parser.add_argument("--no-mask-write", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.data)

    def block(name):
        values = data.get(name, [])
        return ModbusSequentialDataBlock(0, values if values else [0])

    slave = ModbusSlaveContext(
        co=block("co"), di=block("di"), hr=block("hr"), ir=block("ir"), zero_mode=True
    )
    context = ModbusServerContext(slaves={args.unit: slave}, single=False)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    if args.rtu:
        server = ModbusSerialServer(
            context,
            framer=ModbusRtuFramer,
            port=args.rtu,
            baudrate=args.baud,
            parity=args.parity,
            bytesize=args.bytesize,
            stopbits=args.stopbits,
            timeout=0,
        )
        if args.no_mask_write:
            drop_mask_write(server)
        await server.start()
        # pymodbus 3.0 swallows most failures to open the port (logged at debug level) and
        # would serve nothing: say so and exit instead of claiming to listen.
        if server.transport is None:
            sys.stderr.write(f"cannot open {args.rtu}: see pymodbus's debug log\n")
            sys.stderr.flush()
            os._exit(1)
        emit({"event": "listening", "device": args.rtu})
    else:
        server = ModbusTcpServer(
            context,
            framer=ModbusSocketFramer,
            address=("127.0.0.1", args.tcp or 0),
            allow_reuse_address=True,
        )
        if args.no_mask_write:
            drop_mask_write(server)
        task = asyncio.create_task(server.serve_forever())
        await server.serving
        port = server.server.sockets[0].getsockname()[1]
        emit({"event": "listening", "port": port})
    threading.Thread(target=watch_stdin, args=(loop, slave, done), daemon=True).start()
    await done.wait()
    os._exit(0)


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
