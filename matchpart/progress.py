"""A one-line progress display on stderr for work that takes more than a couple of seconds.

It stays silent for the first DELAY seconds (short runs print nothing), redraws one line in
place (carriage return) with the current step and the elapsed time, and is off when stderr is
not a terminal (logs and pipes get no control characters) or when the user asks for quiet.
"""
from __future__ import annotations

import sys
import threading
import time

DELAY = 2.0      # seconds before anything is shown
INTERVAL = 0.25  # seconds between redraws of the elapsed time


class Progress:
    """``with Progress("partitioning") as p: ... p.update("level 3") ...``"""

    def __init__(self, task, *, stream=None, enabled=None, delay=DELAY):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.task, self.step, self.delay = task, "", delay
        self.start = time.perf_counter()
        self.shown = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None

    def __enter__(self):
        if self.enabled:
            # a thread redraws the elapsed time, so a single long call (one partition) shows progress too
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, step):
        """Say what is being done now (e.g. '[3/20] 4elt.graph local_max seed 1')."""
        self.step = step
        if self.enabled:
            self._draw()

    def _tick(self):
        while not self._stop.wait(INTERVAL):
            self._draw()

    def _draw(self):
        elapsed = time.perf_counter() - self.start
        if elapsed < self.delay:
            return
        text = f"{self.task}: {self.step} ({elapsed:.0f} s)" if self.step else f"{self.task} ({elapsed:.0f} s)"
        with self._lock:
            if not self._stop.is_set():
                self.stream.write("\r\033[K" + text)
                self.stream.flush()
                self.shown = True

    def close(self):
        """Stop and wipe the line, so that what follows starts on a clean line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self.shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self.shown = False
