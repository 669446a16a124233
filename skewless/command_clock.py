"""The command's own clock: when this interpreter first imported skewless (`skewless/__init__.py` imports this
module before anything else). run.json's seconds.startup and total count from here (runtime.process_start_time),
not from the process's start, which a shell that ran other commands before exec'ing `skewless`
(`bash -c 'pip install ... && skewless run ...'`) had started minutes earlier."""

import time

STARTED = time.time()
