"""Progress bars of long work, on stderr: one run's simulated time, and one bar over the runs of
one sweep or of every experiment of a reproduction ("experiment k/n, runs done/total, ETA").

The sweep bar refreshes only when a run is stored, without a thread of its own, so that pool
workers can be forked while it shows. Its ETA is the mean wall time of the runs finished in
this session times the runs left: runs a resumed sweep found already stored count as done but
not in that mean.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

NSEC_PER_SEC = 1_000_000_000


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False, markup=False)


def clock(seconds: float | None) -> str:
    """``seconds`` as H:MM:SS, or ``-:--:--`` when unknown."""
    if seconds is None:
        return "-:--:--"
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _Eta(ProgressColumn):
    """The task's ``eta`` field (seconds, or None before the first finished run)."""

    def render(self, task: Task) -> Text:
        return Text(f"ETA {clock(task.fields.get('eta'))}")


@contextmanager
def run_bar(label: str, console: Console | None = None) -> Iterator[Callable[[int, int], None]]:
    """A bar of one run's simulated time with its ETA; yields the progress callback that
    :func:`wificc.api.run` takes (``done_ns``, ``total_ns``). Transient: gone when the run ends;
    shown only on a terminal (redirected, stderr gets nothing from it)."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[done_s]:.1f}/{task.fields[total_s]:.1f} s simulated"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
    )
    console = console or stderr_console()
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=None, done_s=0.0, total_s=0.0)

        def advance(done_ns: int, total_ns: int) -> None:
            seconds = {"done_s": done_ns / NSEC_PER_SEC, "total_s": total_ns / NSEC_PER_SEC}
            bar.update(task, completed=done_ns, total=total_ns, **seconds)

        yield advance


class SweepBar:
    """One bar over the runs of one sweep or of several (a reproduction's experiments).

    ``runs``: the total over every sweep the bar covers; ``sweeps``: how many there are (the
    bar says "experiment k/n NAME" when more than one). :meth:`begin` starts each sweep,
    :meth:`stored` counts a finished run.
    """

    def __init__(self, runs: int = 0, sweeps: int = 1, console: Console | None = None, shown: bool = True):
        self.sweeps = sweeps
        self.sweep = 0
        self.name = ""
        self.fresh = 0
        self.started: float | None = None
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("runs {task.completed:.0f}/{task.total:.0f}"),
            _Eta(),
            TimeElapsedColumn(),
        )
        self.progress = Progress(*columns, console=console or stderr_console(), disable=not shown, auto_refresh=False)
        self.task = self.progress.add_task("", total=runs, eta=None)

    def __enter__(self) -> SweepBar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    @property
    def console(self) -> Console:
        return self.progress.console

    def _where(self) -> str:
        return f"experiment {self.sweep}/{self.sweeps} {self.name}: " if self.sweeps > 1 else ""

    def begin(self, name: str, runs: int, already_done: int) -> None:
        """A sweep of ``runs`` runs starts, ``already_done`` of them stored earlier. A bar made
        for one sweep without a total takes this one's."""
        self.sweep += 1
        self.name = name
        if self.sweeps == 1 and not self.progress.tasks[0].total:
            self.progress.update(self.task, total=runs)
        self.progress.update(
            self.task,
            advance=already_done,
            description=f"{self._where()}sweep ({already_done} of {runs} already done)",
            refresh=True,
        )
        if self.started is None:
            self.started = time.monotonic()

    def stored(self, label: str) -> None:
        """A run was stored."""
        self.fresh += 1
        task = self.progress.tasks[0]
        left = max(0.0, (task.total or 0) - task.completed - 1)
        now = time.monotonic()
        elapsed = now - (now if self.started is None else self.started)
        self.progress.update(
            self.task,
            advance=1,
            description=f"{self._where()}done {label}",
            eta=elapsed / self.fresh * left,
            refresh=True,
        )

    def note(self, text: str) -> None:
        self.progress.console.print(text)
