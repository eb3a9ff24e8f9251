"""Kill sweeps at random points (4 seeds x 3 points, SIGKILL of the front end only), resume each,
and count the kills, surviving pool workers, damaged or partial runs, lost and duplicated runs.

`.venv/bin/python scripts/chaos_kills.py` (about a minute on 2 cores); prints one JSON line.
"""

import json
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))

import test_chaos as chaos  # noqa: E402
import wificc  # noqa: E402
from wificc import storage  # noqa: E402
from wificc.sweep import expand  # noqa: E402


def damaged(out: Path) -> int:
    """Visible run directories that fail their manifest."""
    if not storage.runs_dir(out).exists():
        return 0
    return sum(storage.verify(d) is not None for d in storage.runs_dir(out).iterdir() if not d.name.startswith("."))


def main() -> None:
    runs = expand(chaos.GRID)
    counts = {"kills": 0, "orphans": 0, "partial_or_damaged": 0, "lost": 0, "duplicated": 0}
    for seed in (1, 2, 3, 4):
        rng = random.Random(seed)
        out = Path(tempfile.mkdtemp()) / "out"
        for _ in range(3):
            after, pause = rng.randrange(0, len(runs) - 3), rng.uniform(0.0, 0.3)
            before = storage.finished_ids(out) if out.exists() else set()
            process = chaos._sweep_process(chaos.GRID, out)
            workers: set[int] = set()
            while (len(storage.finished_ids(out) - before) if out.exists() else 0) < after or len(workers) < 2:
                workers |= chaos._children(process.pid)
                if process.poll() is not None:
                    break
                time.sleep(0.01)
            time.sleep(pause)
            workers |= chaos._children(process.pid)
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                counts["kills"] += 1
            process.wait()
            process.stderr.close()
            time.sleep(1)
            counts["orphans"] += sum(chaos._alive(w) for w in workers)
            counts["partial_or_damaged"] += damaged(out)
        ids = wificc.sweep(chaos.GRID, out, workers=2, progress=False)["run_id"].tolist()
        counts["lost"] += len({r.id for r in runs} - set(ids))
        counts["duplicated"] += len(ids) - len(set(ids))
        counts["partial_or_damaged"] += damaged(out)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
