"""Honest progress for every long job: a live bar in a terminal, plain lines in a log.

[`Progress`][] counts units of work (steps, games, turns) towards a total. On a terminal it
redraws one line in place (at most ten times a second); when the output is not a terminal (a log
file, a pipe, CI) it prints a plain line when the phase starts, one at least every `every` seconds
(done, rate, time left) and one when it ends, so a log never goes quiet for long and never holds
carriage returns. It needs no third-party package.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: Seconds between progress lines in a log.
LOG_EVERY = 30.0
_REDRAW = 0.1  # seconds between redraws of a terminal bar
_WIDTH = 24  # characters of the bar itself


def duration(seconds: float) -> str:
    """`1:02:03` or `2:03` (minutes and seconds) for a number of seconds."""
    s = int(round(max(seconds, 0)))
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Progress of one phase of a job, `done` of `total` units.

    Args:
        total: units the phase is expected to take (`None`: unknown, no bar or time left).
        desc: what the phase is, e.g. `"PPO"` or `"2-player games"`.
        unit: the unit's name, e.g. `"steps"`.
        enabled: `False` prints nothing at all.
        stream: where to write (default `sys.stderr`); a terminal gets a live bar.
        every: seconds between lines when `stream` is not a terminal.
        start: units already done before this phase (a resumed run), counted in `done` but not
            in the rate.
    """

    def __init__(
        self,
        total: int | None,
        desc: str,
        unit: str = "steps",
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        every: float = LOG_EVERY,
        start: int = 0,
    ) -> None:
        self.total = total
        self.desc = desc
        self.unit = unit
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every
        self.start = start
        self.done: float = start
        self.started = time.perf_counter()
        self._shown = -float("inf")  # when the last line or redraw was written
        self._closed = False
        if enabled and not self.live:
            size = f"{total:,} {unit}" if total is not None else unit
            self._write(f"{desc}: started ({size})\n")
            self._shown = self.started

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        """`n` more units done."""
        self.set(self.done + n)

    def set(self, done: float) -> None:
        """`done` units done in all (including `start`; fractions show as such: 1.5 epochs)."""
        self.done = done
        if not self.enabled or self._closed:
            return
        now = time.perf_counter()
        if self.live and now - self._shown >= _REDRAW:
            self._write("\r" + self.line(now) + "\x1b[K")
            self._shown = now
        elif not self.live and now - self._shown >= self.every:
            self._write(self.line(now) + "\n")
            self._shown = now

    def close(self, note: str = "") -> None:
        """End the phase with a final line (`note` appended), once."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            end = (
                ("\r" if self.live else "") + self.line(time.perf_counter(), final=True) + (f"; {note}" if note else "")
            )
            self._write(end + ("\x1b[K\n" if self.live else "\n"))

    def line(self, now: float, final: bool = False) -> str:
        """The progress text: done of total, percentage, rate, elapsed and time left."""
        elapsed = now - self.started
        rate = (self.done - self.start) / elapsed if elapsed > 0 else 0.0
        head = f"{self.desc}:"
        if self.total:
            share = min(self.done / self.total, 1.0)
            if self.live:
                filled = int(share * _WIDTH)
                head += " [" + "#" * filled + "." * (_WIDTH - filled) + "]"
            parts = [f"{_amount(self.done)}/{self.total:,} {self.unit} ({share:.0%})"]
        else:
            parts = [f"{_amount(self.done)} {self.unit}"]
        parts.append(f"{rate:,.0f} {self.unit}/s" if rate >= 10 else f"{rate:.2f} {self.unit}/s")
        if final:
            parts.append(f"in {duration(elapsed)}")
        else:
            parts.append(f"elapsed {duration(elapsed)}")
            if self.total and rate > 0 and self.done < self.total:
                parts.append(f"left {duration((self.total - self.done) / rate)}")
        return f"{head} {', '.join(parts)}"

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def _amount(done: float) -> str:
    """A count as `1,024`, or with one decimal when it is a fraction (`1.5`)."""
    return f"{done:,.0f}" if float(done).is_integer() else f"{done:,.1f}"
