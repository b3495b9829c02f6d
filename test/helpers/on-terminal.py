"""Runs a command with a pseudo-terminal as its stdin, the case of an operator at a shell.

Usage: python3 on-terminal.py COMMAND [ARG...]

The command's stdout and stderr pass through unchanged (pipes, not the terminal), and this
script exits with the command's exit code. Unlike util-linux `script`, it does not copy its
own stdin to the terminal, so it behaves the same whether or not it has a terminal itself.
"""

import os
import subprocess
import sys

primary, secondary = os.openpty()
try:
    result = subprocess.run(sys.argv[1:], stdin=secondary, timeout=30, check=False)
finally:
    os.close(secondary)
    os.close(primary)
sys.exit(result.returncode)
