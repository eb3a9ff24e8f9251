"""The HTML report: experiments found, tables, parameters, and every figure rendered in Chromium."""

import base64
import re
import shutil
import subprocess

import pandas as pd
import pytest
import wificc
from test_figures import SHORT, grid_runs, write_sweep
from typer.testing import CliRunner
from wificc import figures, report, scenarios

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
    assert captions[2:4] == ["Goodput versus ping", "Ping RTT CDF"]
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


def test_settings_summary_percentiles():
    table = pd.DataFrame(
        {
            "cc": ["bbr", "bbr", "cubic"],
            "total_goodput_bps": [10e6, 20e6, 30e6],
            "ping_p50_ms": [5.0, 7.0, 9.0],
            "jain": [None, None, None],
        }
    )
    summary = report.settings_summary(table, ["cc"])
    assert list(summary.columns) == [
        "cc",
        "n",
        "goodput_mbps_p10",
        "goodput_mbps_p50",
        "goodput_mbps_p90",
        "ping_p50_ms_p10",
        "ping_p50_ms_p50",
        "ping_p50_ms_p90",
    ]
    assert summary.values.tolist() == [
        ["bbr", 2, 11.0, 15.0, 19.0, 5.2, 6.0, 6.8],
        ["cubic", 1, 30, 30, 30, 9, 9, 9],
    ]


def images(text: str) -> list[bytes]:
    return [base64.b64decode(data) for data in re.findall(r'<img src="data:image/png;base64,([^"]+)"', text)]


def test_report_of_a_run(experiments):
    path = report.write(experiments / "a-run")
    assert path == experiments / "a-run" / "report.html"
    text = path.read_text()
    pngs = images(text)
    assert len(pngs) == 2 and all(p.startswith(b"\x89PNG\r\n\x1a\n") for p in pngs)
    for heading in ("Run summary", "Flows", "Pings", "Queues", "Parameters"):
        assert f"<h3>{heading}</h3>" in text
    assert "bbr-up-0" in text and "icmp-ping-0" in text and "bottleneck" in text
    assert "<td>path.rate</td>" in text and "<td>20000000bit</td>" in text
    assert "<script" not in text and "http" not in text.replace('lang="en"', "")
    # Nothing depends on the clock: the same directory, the same bytes.
    assert report.write(experiments / "a-run", experiments / "again.html").read_bytes() == path.read_bytes()
    (experiments / "again.html").unlink()


def test_report_of_a_sweep_has_every_runs_parameters(experiments):
    text = report.render(experiments / "b-sweep")
    assert len(images(text)) == 6
    assert "<h3>Per setting (8 runs)</h3>" in text
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


def test_chromium_renders_every_figure(experiments, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "chromium not found: scripts/setup-debian.sh installs it (as root)"
    text = report.render(experiments)
    assert len(images(text)) == 8
    page = tmp_path / "page.html"
    page.write_text(text.replace("</body>", IMAGE_CHECK + "\n</body>"))
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '<p id="image-check">images 8/8</p>' in done.stdout, done.stdout[-2000:]
    # A broken image is seen.
    page.write_text(text.replace("</body>", '<img src="data:image/png;base64,AAAA">' + IMAGE_CHECK + "</body>"))
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert '<p id="image-check">images 8/9</p>' in done.stdout
