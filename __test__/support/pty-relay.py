# Runs a command on a pseudo-terminal and relays what it writes to our stdout, unchanged and
# as it arrives: `python3 pty-relay.py <cols> <rows> <command> [args…]`. The command's stdin,
# stdout and stderr are all the terminal (isTTY), as in an interactive shell. Exits with the
# command's exit status (128 + signal when it was killed). SIGINT and SIGTERM sent to the
# relay are passed on to the command, as a terminal passes on Ctrl+C.
import fcntl
import os
import pty
import signal
import struct
import sys
import termios

cols, rows, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    # The window size a terminal would report (a fresh pty is 0x0), set before the command starts.
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.execvp(argv[0], argv)
for forwarded in (signal.SIGINT, signal.SIGTERM):
    signal.signal(forwarded, lambda number, _frame: os.kill(pid, number))
out = sys.stdout.buffer
while True:
    try:
        data = os.read(fd, 65536)
    except InterruptedError:
        continue
    except OSError:  # EIO: every process holding the terminal has closed it
        break
    if not data:
        break
    out.write(data)
    out.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
