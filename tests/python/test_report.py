"""The HTML report (docs/REPORTS.md) of a real run with a failing case and a real bench run, as
headless Chromium renders it: no console message (the page has no script, so any message is an
error), every section and its SVG charts in the DOM, and a screenshot that is not blank.
scripts/setup installs Debian's chromium; the test is skipped only where it is absent."""
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

import numpy_kernels as K
import opval

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SECTIONS = ["summary", "failures", "histograms", "bias", "scaling", "roofline", "trends"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (scripts/setup installs Debian's chromium)")


def chromium(page: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium headless on `page`, its console on stderr (one '...:CONSOLE:...' line per message)."""
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    return subprocess.run([CHROMIUM, "--headless", *sandbox, "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--window-size=1280,2400", *args, page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)


def console_messages(page: Path) -> list[str]:
    return [line for line in chromium(page, "--dump-dom").stderr.splitlines() if ":CONSOLE" in line]


def test_the_console_check_catches_a_planted_error(tmp_path):
    planted = tmp_path / "planted.html"
    planted.write_text('<!DOCTYPE html><html><body><p>x</p><script>console.error("planted")</script></body></html>')
    assert any('"planted"' in line for line in console_messages(planted))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The report of a run whose Python kernel drops the last k term (FAILED beside sim's
    PASSED) and of a bench sweep over n on sim."""
    d = tmp_path_factory.mktemp("report")
    bad = opval.kernel_backend("matmul", K.matmul_dropped_k, contracts="f32", name="dropped_k")
    opval.run(["sim", bad], problems=["matmul m=40 n=33 k=17", "matmul m=64 n=48 k=9"], jsonl=str(d / "run.jsonl"),
              out=io.StringIO())
    bench = subprocess.run([opval.worker_executable(), "bench", "--backend", "sim", "--problems",
                            "matmul m={n} n={n} k={n}", "--axis", "n=8,16,24", "--budget", "0.05", "--jsonl",
                            d / "bench.jsonl"], capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    held = opval.report([d / "run.jsonl"], bench=[d / "bench.jsonl"], output=d / "report.html", title="test <report>")
    assert held == "7 cases and 3 benchmarks", held  # 2 problems on 2 backends, and each bench record's check
    return d / "report.html"


def test_the_report_renders_with_no_console_message(report):
    assert console_messages(report) == []


def test_the_dom_has_every_section_and_its_charts(report):
    dom = chromium(report, "--dump-dom").stdout
    for section in SECTIONS:
        assert f'<section id="{section}">' in dom, section
    charts = re.findall(r'<svg class="chart ([a-z-]+)"', dom)
    assert charts.count("heatmap") == 2, charts  # each failing output (two cases of dropped_k)
    assert "line-chart" in charts and "bar-chart" in charts, charts
    assert "dropped_k" in dom and "test &lt;report&gt;" in dom
    assert "http://" not in report.read_text() and "https://" not in report.read_text()


def test_a_screenshot_is_not_blank(report, tmp_path):
    shot = tmp_path / "report.png"
    done = chromium(report, f"--screenshot={shot}")
    assert shot.exists(), done.stderr
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2400)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 100, "a blank or nearly uniform page"
    most = max(count for count, _ in colours)
    assert most < 0.9 * image.size[0] * image.size[1], "one colour covers nine tenths of the page"


def test_bad_input_is_a_value_error_naming_the_file(tmp_path):
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ValueError, match="missing.jsonl"):
        opval.report([missing], output=tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(TypeError, match="list of paths"):
        opval.report(str(missing), output=tmp_path / "r.html")
