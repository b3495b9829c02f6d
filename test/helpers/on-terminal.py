"""Runs a command with a pseudo-terminal as its stdin and controlling terminal: an operator at a
shell. The command's stdout and stderr pass through unchanged (pipes, not the terminal), and this
script exits with the command's exit code. Nobody types on the terminal.

Usage: python3 on-terminal.py [--background] COMMAND [ARG...]

Without --background the command leads a new session whose controlling terminal is the pty, so
it is the terminal's foreground process group (as `tagd users add NAME` typed at a prompt).
With --background a session leader holds the terminal and runs the command in a process group
of its own, a background job (as `tagd users add NAME &` in a shell with job control): if the
command read the terminal it would be stopped by SIGTTIN, if it changed the terminal's modes,
by SIGTTOU, and this script would wait for ever (the test's own timeout then fails it).

No timeout here: the test waits for the exit and bounds the wait itself.
"""

import fcntl
import os
import subprocess
import sys
import termios

# The session leader of --background: runs the command as a job in its own process group.
LEADER = """
import os, subprocess, sys
job = subprocess.Popen(sys.argv[1:], preexec_fn=lambda: os.setpgid(0, 0))
sys.exit(job.wait())
"""

background = len(sys.argv) > 1 and sys.argv[1] == "--background"
command = sys.argv[2:] if background else sys.argv[1:]
primary, secondary = os.openpty()


def new_session():
    # In the child, before exec: a new session, the pty as its controlling terminal (stdin is
    # the pty already), which also makes the child's group the terminal's foreground group.
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


argv = [sys.executable, "-c", LEADER, *command] if background else command
try:
    result = subprocess.run(argv, stdin=secondary, preexec_fn=new_session, check=False)
finally:
    os.close(secondary)
    os.close(primary)
sys.exit(result.returncode)
