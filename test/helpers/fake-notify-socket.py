#!/usr/bin/env python3
"""A fake systemd notify socket: binds a unix datagram socket at argv[1] and prints every
message it receives on one line of stdout (fields joined by spaces), flushed at once.

Stands in for systemd's $NOTIFY_SOCKET in tests. The passed file descriptors of a BARRIER=1
message (systemd-notify waits on them) are closed on receipt, as systemd does, so the sender
goes on. Prints 'listening' once bound; ends on SIGTERM or when stdin closes."""
import array
import os
import select
import socket
import sys

path = sys.argv[1]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
print("listening", flush=True)
while True:
    readable, _, _ = select.select([sock, sys.stdin], [], [])
    if sys.stdin in readable and not sys.stdin.buffer.read1(4096):
        break
    if sock not in readable:
        continue
    data, ancillary, _flags, _address = sock.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
            for fd in fds:
                os.close(fd)
    print(" ".join(data.decode("utf-8", "replace").split("\n")).strip(), flush=True)
