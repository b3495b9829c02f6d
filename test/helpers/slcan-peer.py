#!/usr/bin/python3
"""A Lawicel/SLCAN adapter for tests: the device end of the protocol, served over TCP
(127.0.0.1, ephemeral port) or over a pseudo-terminal (--pty), as a CANable or a ser2net
bridge would serve it.

It answers every command it knows with CR (BEL for the ones it is told to refuse), records the
commands it receives, and sends the frames it is told to send. Frames are encoded by
python-can's own slcan interface (the frame lines python-can writes are exactly the lines an
adapter sends), with a 4-digit millisecond timestamp appended when the host switched
timestamps on (Z1).

Control: JSON lines on stdin.
  {"op": "send", "frames": [{"id": 256, "extended": false, "data": "0011", "remote": false,
   "dlc": 2}], "timestamp": 1234}   timestamp (ms, 0-59999) only used when Z1 is on
  {"op": "raw", "text": "t12"}       send text as is (split or broken lines)
  {"op": "refuse", "command": "S6"}  answer BEL to this command from now on
  {"op": "drop"}                     close the host's connection, keep listening
  {"op": "quit"}
Events: JSON lines on stdout.
  {"event": "listening", "port": N} or {"event": "listening", "pty": "/dev/pts/N"}
  {"event": "connected"}, {"event": "disconnected"}
  {"event": "command", "command": "S6", "answer": "ok"|"error"}
  {"event": "sent", "frames": N, "lines": ["t1002..."]}
"""

import json
import os
import selectors
import socket
import sys
import tty

import can
from can.interfaces.slcan import slcanBus

KNOWN = {"C", "O", "L", "Z0", "Z1"} | {f"S{n}" for n in range(9)}
QUERIES = {"V": "V1013", "v": "v1013", "N": "NT123", "F": "F00"}


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class Encoder:
    """python-can's slcan bus on a loopback port: what it writes is the frame line."""

    def __init__(self):
        self.bus = slcanBus("loop://", sleep_after_open=0)
        self.drain()

    def drain(self):
        port = self.bus.serialPortOrig
        return port.read(port.in_waiting).decode("ascii")

    def encode(self, spec):
        message = can.Message(
            arbitration_id=spec["id"],
            is_extended_id=spec.get("extended", False),
            is_remote_frame=spec.get("remote", False),
            data=bytes.fromhex(spec.get("data", "")),
            dlc=spec.get("dlc"),
        )
        self.bus.send(message)
        line = self.drain()
        assert line.endswith("\r"), line
        return line[:-1]


class Peer:
    def __init__(self, use_pty):
        self.selector = selectors.DefaultSelector()
        self.encoder = Encoder()
        self.timestamps = False
        self.refused = set()
        self.buffer = b""
        self.client = None
        self.server = None
        self.master = None
        if use_pty:
            self.master, slave = os.openpty()
            tty.setraw(slave)
            path = os.ttyname(slave)
            # Keep the slave open so the master does not see a hang-up between host opens.
            self.slave = slave
            self.selector.register(self.master, selectors.EVENT_READ, self.on_host_data)
            emit({"event": "listening", "pty": path})
        else:
            self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.server.bind(("127.0.0.1", 0))
            self.server.listen(4)
            self.selector.register(self.server, selectors.EVENT_READ, self.on_accept)
            emit({"event": "listening", "port": self.server.getsockname()[1]})
        self.selector.register(sys.stdin, selectors.EVENT_READ, self.on_control)

    # Host side -------------------------------------------------------------------------

    def on_accept(self, _):
        connection, _ = self.server.accept()
        if self.client is not None:
            connection.close()
            return
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client = connection
        self.buffer = b""
        self.timestamps = False
        self.selector.register(connection, selectors.EVENT_READ, self.on_host_data)
        emit({"event": "connected"})

    def read_host(self):
        try:
            if self.master is not None:
                return os.read(self.master, 4096)
            return self.client.recv(4096)
        except OSError:
            return b""

    def on_host_data(self, _):
        data = self.read_host()
        if not data:
            if self.master is None:
                self.drop()
            return
        self.buffer += data
        while b"\r" in self.buffer:
            line, self.buffer = self.buffer.split(b"\r", 1)
            self.on_command(line.decode("latin-1"))

    def on_command(self, command):
        if command in QUERIES and command not in self.refused:
            self.write(QUERIES[command] + "\r")
            emit({"event": "command", "command": command, "answer": "ok"})
            return
        ok = command in KNOWN and command not in self.refused
        if ok and command in ("Z0", "Z1"):
            self.timestamps = command == "Z1"
        self.write("\r" if ok else "\a")
        emit({"event": "command", "command": command, "answer": "ok" if ok else "error"})

    def write(self, text):
        data = text.encode("latin-1")
        try:
            if self.master is not None:
                os.write(self.master, data)
            elif self.client is not None:
                self.client.sendall(data)
        except OSError:
            pass

    def drop(self):
        if self.client is None:
            return
        self.selector.unregister(self.client)
        self.client.close()
        self.client = None
        emit({"event": "disconnected"})

    # Control side ----------------------------------------------------------------------

    def on_control(self, _):
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        request = json.loads(line)
        op = request["op"]
        if op == "send":
            lines = [self.encoder.encode(spec) for spec in request["frames"]]
            stamp = request.get("timestamp")
            if self.timestamps and stamp is not None:
                lines = ["%s%04X" % (text, stamp % 60000) for text in lines]
            self.write("".join(text + "\r" for text in lines))
            emit({"event": "sent", "frames": len(lines), "lines": lines})
        elif op == "raw":
            self.write(request["text"])
            emit({"event": "sent", "frames": 0, "lines": []})
        elif op == "refuse":
            self.refused.add(request["command"])
            emit({"event": "refusing", "command": request["command"]})
        elif op == "drop":
            self.drop()
        elif op == "quit":
            sys.exit(0)

    def run(self):
        while True:
            for key, _ in self.selector.select():
                key.data(key.fileobj)


if __name__ == "__main__":
    Peer("--pty" in sys.argv).run()
