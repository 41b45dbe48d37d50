"""Every ```python block of docs/PYTHON.md runs as written, from the repository root, blocks of
one section sharing a namespace."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "PYTHON.md"


def sections():
    out, title = {}, None
    for block in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        title = block.splitlines()[0].strip()
        code = re.findall(r"```python\n(.*?)```", block, flags=re.S)
        if code:
            out[title] = code
    return out


@pytest.mark.parametrize("title", list(sections()))
def test_examples_run_as_written(title, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "__docs__"}
    for code in sections()[title]:
        exec(compile(code, f"docs/PYTHON.md ({title})", "exec"), namespace)


def test_the_pytest_example_is_a_working_test_file(pytester):
    """The pytest section's test file (a ```text block, as it is a file, not a snippet)."""
    block = DOC.read_text().split("## pytest plugin", 1)[1]
    code = re.findall(r"```text\n(.*?)```", block, flags=re.S)[0]
    pytester.makepyfile(test_example=code)
    result = pytester.runpytest("--opval-tier", "smoke", "-q")
    result.assert_outcomes(passed=1)
