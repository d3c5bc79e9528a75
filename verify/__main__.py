"""``python -m verify``: the command line."""

import os
import signal
import sys

from verify.cli import main

code = main()
# a signal while the interpreter shuts down (the work is done, the outputs written): exit at
# once with 128 + its number instead of a traceback or a death by signal
for _sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_sig, lambda signum, frame: os._exit(128 + signum))
try:
    sys.stdout.flush()
except BrokenPipeError:  # the reader left (`... | head`): quiet, as in verify.cli
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 141
raise SystemExit(code)
