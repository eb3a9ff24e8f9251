"""The HTML report: experiments found, tables, parameters, and every figure rendered in Chromium."""

import base64
import json
import math
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import matplotlib.image as mpimg
import pandas as pd
import pytest
import wificc
from test_figures import SHORT, grid_runs, write_sweep
from typer.testing import CliRunner
from wificc import _core as wificc_core
from wificc import figures, report, scenarios

# When the reports of the tests say they were rendered.
WHEN = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)

# Chromium as the tests run it: headless, as root (no sandbox), with no network chatter.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=10000",
]
# Added to a copy of a report: once the page has loaded, writes how many images decoded.
IMAGE_CHECK = """<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const drawn = images.filter((i) => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0);
  const marker = document.createElement("p");
  marker.id = "image-check";
  marker.textContent = "images " + drawn.length + "/" + images.length;
  document.body.appendChild(marker);
});
</script>"""


@pytest.fixture(scope="module")
def experiments(tmp_path_factory):
    """A directory with a run (one upload and ping) and a sweep (cc x tsq x 2 seeds)."""
    root = tmp_path_factory.mktemp("experiments")
    wificc.run(scenarios.build("tcp_upload", cc=["bbr"], **SHORT)).save(root / "a-run")
    write_sweep(root / "b-sweep", grid_runs())
    return root


def test_experiments_are_runs_and_sweeps_in_name_order(experiments, tmp_path):
    assert figures.experiments(experiments) == [
        ("a-run", experiments / "a-run"),
        ("b-sweep", experiments / "b-sweep"),
    ]
    assert figures.experiments(experiments / "b-sweep") == [("b-sweep", experiments / "b-sweep")]
    with pytest.raises(ValueError, match=f"^DIR: '{tmp_path}' holds no run"):
        figures.experiments(tmp_path)
    with pytest.raises(ValueError, match=f"^DIR: '{tmp_path / 'x'}' is not a directory$"):
        figures.experiments(tmp_path / "x")
    # wificc plot draws each experiment into its own directory.
    captions = [caption for caption, _ in figures.plot(experiments, tmp_path / "figs")]
    assert captions[:2] == ["Pacing rate, bw model and cwnd per flow", "Ping RTT CDF while the flows run"]
    assert captions[4:6] == ["Goodput versus ping", "Ping RTT CDF"]
    assert (tmp_path / "figs" / "a-run" / "series.png").is_file()
    assert (tmp_path / "figs" / "b-sweep" / "goodput_ping.svg").is_file()


def test_cells_and_tables():
    cells = [18511232.0, 123456, 0.123456, 42.0, 3, None, float("nan"), True, "<b>"]
    assert [report._format(v) for v in cells] == [
        "18,511,232",
        "123,456",
        "0.1235",
        "42",
        "3",
        "-",
        "-",
        "True",
        "<b>",
    ]
    html = report.table_html(pd.DataFrame({"name": ["<b>x</b>"], "goodput": [2e7]}))
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x" not in html
    assert "<td>20,000,000</td>" in html


def test_headline_table_percentiles_and_confidence_interval():
    table = pd.DataFrame(
        {
            "cc": ["bbr", "bbr", "bbr", "cubic"],
            "total_goodput_bps": [10e6, 20e6, 30e6, 40e6],
            "ping_p50_ms": [5.0, 7.0, 9.0, 2.0],
            "jain": [None, None, None, None],
            "flow0_goodput_bps": [10e6, 20e6, 30e6, 40e6],
        }
    )
    headline = report.headline_table(table, ["cc"])
    assert list(headline.columns) == [
        "setting",
        "runs",
        "goodput Mbit/s median",
        "goodput Mbit/s p10",
        "goodput Mbit/s p90",
        "goodput Mbit/s mean [95% CI]",
        "ping ms median",
        "ping ms p10",
        "ping ms p90",
        "ping ms mean [95% CI]",
    ]
    # bbr: 10, 20, 30 Mbit/s: p10 12, p90 28; mean 20, s = 10, t(0.975, 2) = 4.302653 -> 20 +- 24.84.
    # Pings 5, 7, 9 ms: s = 2 -> 7 +- 4.969.
    assert headline.values.tolist() == [
        ["bbr", 3, 20.0, 12.0, 28.0, "20 [-4.841, 44.84]", 7.0, 5.4, 8.6, "7 [2.032, 11.97]"],
        ["cubic", 1, 40.0, 40.0, 40.0, "40 (one run)", 2.0, 2.0, 2.0, "2 (one run)"],
    ]


def test_anova_across_the_congestion_controls():
    table = pd.DataFrame(
        {
            "cc": ["a", "a", "a", "b", "b", "b"] * 2,
            "tsq": ["1ms"] * 6 + ["4ms"] * 6,
            "total_goodput_bps": [1e6, 2e6, 3e6, 4e6, 5e6, 6e6] * 2,
            "ping_p50_ms": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0] + [1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
        }
    )
    anova = report.anova_of(table, ["cc", "tsq"])
    # Goodput: group means 2 and 5 around 3.5: between 2 x 3 x 1.5^2 = 13.5 (1 df), within
    # 2 + 2 = 4 (4 df): F = 13.5 / 1 = 13.5. Equal pings: F = 0 / 0 (NaN); equal groups: F = 0.
    assert anova["metric"].tolist() == ["goodput (Mbit/s)"] * 2 + ["ping under load (ms)"] * 2
    assert anova["setting"].tolist() == ["1 ms", "4 ms", "1 ms", "4 ms"]
    assert anova["F"].tolist()[:2] == pytest.approx([13.5, 13.5])
    assert math.isnan(anova["F"].iloc[2]) and anova["F"].iloc[3] == 0.0
    assert anova[["CCAs (k)", "runs (N)", "df k-1", "df N-k"]].values.tolist() == [[2, 6, 1, 4]] * 4
    assert report.anova_of(table[table["cc"] == "a"], ["cc", "tsq"]).empty


def test_units_and_markdown():
    frame = report.in_units(
        pd.DataFrame({"goodput_bps": [2.5e7], "rtt_p50_ms": [3.0], "wall_s": [1.0], "max_bytes": [5]})
    )
    assert list(frame.columns) == ["goodput (Mbit/s)", "rtt_p50 (ms)", "wall (s)", "max (bytes)"]
    assert frame.values.tolist() == [[25.0, 3.0, 1.0, 5]]
    text = "# Title\n\n**Some** `code` & more.\n\n| a | b |\n|---|---|\n| 1 | `x` |\n| x=1\\|2 | y |\n"
    assert report.markdown_html(text) == (
        "<h3>Title</h3>\n<p><b>Some</b> <code>code</code> &amp; more.</p>\n"
        '<div class="scroll"><table class="text"><thead><tr><th>a</th><th>b</th></tr></thead>'
        "<tbody><tr><td>1</td><td><code>x</code></td></tr><tr><td>x=1|2</td><td>y</td></tr></tbody></table></div>"
    )


def images(text: str) -> list[bytes]:
    return [base64.b64decode(data) for data in re.findall(r'<img src="data:image/png;base64,([^"]+)"', text)]


def test_report_of_a_run(experiments):
    path = report.write(experiments / "a-run", now=WHEN, machine="test machine")
    assert path == experiments / "a-run" / "report.html"
    text = path.read_text()
    pngs = images(text)
    assert len(pngs) == 4 and all(p.startswith(b"\x89PNG\r\n\x1a\n") for p in pngs)
    assert "<th>Report rendered</th><td>2026-01-02 03:04 UTC on test machine</td>" in text
    assert "<th>What was run</th><td>one run (a-run)</td>" in text
    assert "path wired" in text and f"simulator model of the results {wificc_core.MODEL} (this build&#x27;s)" in text
    for heading in ("Run summary", "Flows", "Pings", "Queues", "Parameters"):
        assert f"<h3>{heading}</h3>" in text
    assert "bbr-up-0" in text and "icmp-ping-0" in text and "bottleneck" in text
    assert "<td>path.rate</td>" in text and "<td>20 Mbit/s</td>" in text and "20000000bit" not in text
    assert re.search(r"<td>duration</td>\s*<td>1.8 s</td>", text) and re.search(r"<td>warmup</td>\s*<td>0 s</td>", text)
    assert "<script" not in text and "http" not in text.replace('lang="en"', "")
    # Nothing depends on the clock: the same directory, the same bytes.
    again = report.write(experiments / "a-run", experiments / "again.html", now=WHEN, machine="test machine")
    assert again.read_bytes() == path.read_bytes()
    (experiments / "again.html").unlink()


def test_report_of_a_sweep_has_every_runs_parameters(experiments):
    text = report.render(experiments / "b-sweep")
    assert len(images(text)) == 8
    assert "<h3>Per setting (8 runs)</h3>" in text
    assert "Grid: cc {cubic, bbr} &times; tsq {1 ms, 4 ms}; 2 repetitions of each setting (8 runs) of 1.8 s" in text
    assert "<h3>One-way ANOVA across the congestion controls</h3>" in text
    assert "the median over the setting&#x27;s 2 repetitions (line)" in text and "from 400 ms to 1.4 s" in text
    shared = text.split("<h3>Parameters shared by every run</h3>")[1].split("<h3>")[0]
    assert "<td>path.rate</td>" in shared and "<td>duration</td>" in shared
    assert "flows[0].cc" not in shared and "<td>seed</td>" not in shared
    differ = text.split("<h3>Parameters that differ between runs</h3>")[1]
    header = re.findall(r"<th>([^<]*)</th>", differ.split("</thead>")[0])
    assert header == ["run_id", "flows[0].cc", "seed", "stack.tsq"]
    assert differ.split("<tbody>")[1].count("<tr>") == 8


def test_report_command(experiments, tmp_path):
    from wificc.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["report", str(experiments), "--out", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    assert out.stdout == f"wrote {tmp_path / 'r.html'}\n"
    out = runner.invoke(app, ["report", str(tmp_path / "none")])
    assert out.exit_code == 2
    assert out.stderr == f"error: DIR: '{tmp_path / 'none'}' is not a directory\n"


@pytest.fixture(scope="module")
def reproduction(experiments, tmp_path_factory):
    """A directory as `wificc reproduce` writes it: study.json, headline.md, comparison.md and
    a sweep per experiment."""
    root = tmp_path_factory.mktemp("reproduction")
    shutil.copytree(experiments / "b-sweep", root / "upload")
    about = {
        "study": "bbrp",
        "title": "A study",
        "testbed": "a bench",
        "kernel": "4.19",
        "quick": True,
        "repetitions": 2,
        "started": "2026-01-02 03:00 UTC",
        "machine": "bench",
        "wall_s": 75.0,
    }
    (root / report.STUDY_FILE).write_text(json.dumps(about))
    (root / "headline.md").write_text(
        "# A study\n\n| experiment | setting | runs |\n|---|---|---|\n| upload | cc=bbr | 2 |\n"
    )
    (root / "comparison.md").write_text("# A study: beside the paper\n\n| line | agrees? |\n|---|---|\n| 1 | yes |\n")
    return root


def test_report_of_a_reproduction(reproduction):
    text = report.render(reproduction, now=WHEN, machine="test machine")
    assert "<title>wificc report: A study</title>" in text
    assert "<th>What was run</th><td>A study (wificc reproduce bbrp, --quick): 1 experiment (upload)</td>" in text
    assert "<th>Testbed (study)</th><td>a bench. Kernel profile: 4.19.</td>" in text
    assert "started 2026-01-02 03:00 UTC on bench, took 1 min 15 s" in text
    headline = text.split("<h2>Headline (headline.md)</h2>")[1].split("<h2>")[0]
    assert "<td>upload</td><td>cc=bbr</td><td>2</td>" in headline
    assert "<h2>Beside the paper (comparison.md)</h2>" in text
    # The experiment's description from the study.
    assert "<p>1 upload per CCA, TSQ and chipset, 30 s. Grid: cc {cubic, bbr}" in text


def chromium_run(tmp_path: Path, name: str, *args: str) -> subprocess.CompletedProcess:
    chromium = shutil.which("chromium")
    return subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / name}", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not found: scripts/setup-debian.sh installs it")
@pytest.mark.parametrize("which", ["sweep", "reproduction"])
def test_chromium_renders_every_figure(experiments, reproduction, tmp_path, which):
    directory = experiments / "b-sweep" if which == "sweep" else reproduction
    text = report.render(directory, now=WHEN, machine="test machine")
    count = len(images(text))
    assert count == 8
    page = tmp_path / "page.html"
    page.write_text(text.replace("</body>", IMAGE_CHECK + "\n</body>"))
    done = chromium_run(tmp_path, "dom", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr
    assert f'<p id="image-check">images {count}/{count}</p>' in done.stdout, done.stdout[-2000:]
    # The page as a reader sees its top: drawn, and not one colour.
    shot = tmp_path / "shot.png"
    done = chromium_run(tmp_path, "shot", f"--screenshot={shot}", "--window-size=1280,2400", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2400, 1280)
    # At least 2% of the pixels differ from the white page (text, tables, figures).
    assert (pixels.min(axis=2) < 0.9).mean() > 0.02
    if which == "sweep":
        # A broken image is seen.
        page.write_text(text.replace("</body>", '<img src="data:image/png;base64,AAAA">' + IMAGE_CHECK + "</body>"))
        done = chromium_run(tmp_path, "broken", "--dump-dom", page.as_uri())
        assert f'<p id="image-check">images {count}/{count + 1}</p>' in done.stdout
