"""The README's tour works as written (issue 16): every command of its ```sh blocks runs, in
order, from the repository root, after the README's first command (`scripts/setup run`, which
builds opval and the example plugins), with a temporary HOME (`bench --machine` writes its cache
there); each exits as the README says (0, or 1 where the text around it says "exit 1") and shows
its key lines; and each example output the README shows is what the command prints now, timings
aside (or every number aside, for timing tables). The whole tour must finish within
TOUR_BUDGET_SECONDS.

An example output is a ``` block whose first line is `$ COMMAND`, or one preceded by a comment
`<!-- output of: COMMAND -->`; `numbers aside` in that comment compares the shape only, `exit 1`
expects that exit code. A line `...` in an example stands for any number of lines.

To regenerate the examples from this run: OPVAL_TOUR_REGENERATE=1 pytest tests/python/test_readme_tour.py
"""
import os
import re
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOUR_BUDGET_SECONDS = 20 * 60
COMMAND_TIMEOUT_SECONDS = 8 * 60

# Key lines per command (a regex searched in its stdout + stderr), beyond its exit code.
KEY_LINES = {
    "build/opval list ops -v": r"matmul",
    "build/opval list suites": r"smoke\s+regression",
    "build/opval run --tag smoke\n": r"\n\d+ passed, 0 failed, \d+ skipped\n",
    "--plugin build/examples/plugins/libsgemm_tiled.so": r"\n\d+ passed, 0 failed, \d+ skipped\n",
    "run --plugin build/examples/plugins/libflash_attention.so": r"\n\d+ passed, 0 failed, \d+ skipped\n",
    "build/opval coverage --plugin": r"attention on plugin:flash_attention: .*\n(.*\n)*\d+ generated cases for plugin",
    "run --tag generated --plugin": r"\n\d+ passed, 0 failed, \d+ skipped\n",
    "build/opval bench --machine": r"saved",
    ".venv/bin/python my_softmax.py": r"my_softmax \(softmax\): \d+ passed, 0 failed",
    "build/opval judge": r"PASSED",
    "build/opval graph info": r"transformer_block|node",
    "--reproducer results/repro": r"GeluApproximation",
    "build/opval graph precision": r"float32|f32",
}


# A command that may fail honestly, with the line that says so: `bench --machine` refuses to
# save figures a loaded machine measured inconsistently (docs/BENCHMARKING.md). The examples
# that need the roofline are then not compared (a warning says so).
HONEST_REFUSALS = {"build/opval bench --machine": (1, r"opval bench --machine: not saved: ")}
NEEDS_THE_ROOFLINE = ("build/opval bench ",)


@dataclass
class command:
    text: str
    exit_code: int = 0


@dataclass
class example:
    command: str
    lines: list           # the README's lines of the example (without the `$ ` line)
    start: int            # where its lines start in README.md (0-based)
    numbers_aside: bool = False
    exit_code: int = 0


@dataclass
class tour:
    commands: list = field(default_factory=list)
    examples: list = field(default_factory=list)


def tour_section(text):
    start = text.index("## A five-minute tour")
    return start, text[start:text.index("\n## ", start + 1)]


def split_commands(block):
    """The commands of a ```sh block: lines joined across `\\`, a heredoc kept with its command,
    `# ...` comments above a command saying what it should exit with."""
    lines, out, i, comments = block.splitlines(), [], 0, []
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            comments, i = [], i + 1
            continue
        if line.lstrip().startswith("#"):
            comments.append(line)
            i += 1
            continue
        text = line
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text += "\n" + lines[i]
        heredoc = re.search(r"<<'?(\w+)'?", text)
        if heredoc:
            end = heredoc.group(1)
            while i + 1 < len(lines):
                i += 1
                text += "\n" + lines[i]
                if lines[i].strip() == end:
                    break
        said = " ".join(comments) + " " + (text.split(" #", 1)[1] if " #" in text.splitlines()[0] else "")
        out.append(command(text, 1 if re.search(r"\bexit 1\b", said) else 0))
        comments, i = [], i + 1
    return out


def read_tour(text, whole_document=False):
    """The tour's commands and examples; of another document (whole_document), its examples."""
    offset, section = (0, text) if whole_document else tour_section(text)
    base_line = text[:offset].count("\n")
    t = tour()
    # Any info string (c++, text, ...), or the fences of a block in another language pair wrongly.
    pattern = re.compile(r"(?:<!--(?P<note>[^>]*)-->\n)?^```(?P<lang>[^\n`]*)\n(?P<body>.*?)^```", re.S | re.M)
    for m in pattern.finditer(section):
        body, lang, note = m.group("body"), m.group("lang"), (m.group("note") or "")
        if lang == "sh":
            if not whole_document:
                t.commands += split_commands(body)
            continue
        if lang:
            continue
        first_body_line = base_line + section[:m.start("body")].count("\n")
        lines = body.rstrip("\n").split("\n")
        exit_code = 1 if "exit 1" in note else 0
        if lines[0].startswith("$ "):
            t.examples.append(example(lines[0][2:], lines[1:], first_body_line + 1, "numbers aside" in note, exit_code))
        elif "output of:" in note:
            cmd = note.split("output of:", 1)[1].split("|")[0].strip()
            t.examples.append(example(cmd, lines, first_body_line, "numbers aside" in note, exit_code))
    return t


# A figure with its unit; the unit may end at a bracket or a comma ("(33%),"), not inside a word.
MEASUREMENT = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?\s?(ns|us|ms|s|%|B|KiB|MiB|GiB|allocations?)(?![A-Za-z0-9])")
NUMBER = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?")


def normal(line, numbers_aside):
    line = (NUMBER if numbers_aside else MEASUREMENT).sub("#", line)
    return " ".join(line.split())


# Lines about how noisy a timing was: present or not from one run to the next.
NOISE_LINE = re.compile(r"^\s+noise: ")


def segments(lines):
    """The example's runs of lines between `...` lines, and whether it is anchored at the start
    and at the end of the output."""
    runs, current = [], []
    for line in lines:
        if line.strip() == "...":
            runs.append(current)
            current = []
        else:
            current.append(line)
    runs.append(current)
    return runs, bool(runs[0]), bool(runs[-1])


def tokens(lines, numbers_aside):
    """The words of `lines` after normal(), each with the index of its line: compared as one
    stream, so that a line wrapped at another place (a timing one character longer) still
    matches."""
    return [(word, i) for i, line in enumerate(lines) for word in normal(line, numbers_aside).split()]


def find_run(words, want, start, anchored_start, anchored_end):
    """Where the word sequence `want` starts in `words` at or after `start`; None when nowhere."""
    n = len(want)
    if anchored_start:
        candidates = [0]
    elif anchored_end:
        candidates = [len(words) - n]
    else:
        candidates = range(start, len(words) - n + 1)
    return next((c for c in candidates if c >= start and words[c:c + n] == want), None)


def locate(ex, output_lines):
    """For each run of the example, the lines of the output it matches ((first, last) line
    indexes), or None where it matches nowhere. Anchored runs sit at the start / end; the others
    at the first place after the previous run."""
    runs, at_start, at_end = segments(ex.lines)
    out = tokens(output_lines, ex.numbers_aside)
    words = [w for w, _ in out]
    places, position = [], 0
    for k, run in enumerate(runs):
        want = [w for w, _ in tokens(run, ex.numbers_aside)]
        if not want:
            places.append(None if run else (position, position))
            continue
        found = find_run(words, want, position, k == 0 and at_start, k == len(runs) - 1 and at_end)
        if found is None:
            places.append(None)
            continue
        places.append((out[found][1], out[found + len(want) - 1][1]))
        position = found + len(want)
    return runs, places


def regenerated(ex, output_lines):
    """The example rewritten from this output: each run replaced by the lines it matches; a run
    that matched nowhere by as many lines from the start, the end, or where its first words are."""
    runs, places = locate(ex, output_lines)
    _, at_start, at_end = segments(ex.lines)
    out, line = [], 0
    for k, (run, place) in enumerate(zip(runs, places)):
        if k > 0:
            out.append("...")
        if not run:
            continue
        if place is None and len(runs) == 1:  # the whole output, shown whole
            place = (0, len(output_lines) - 1)
        if place is None:
            if k == 0 and at_start:
                first = 0
            elif k == len(runs) - 1 and at_end:
                first = max(0, len(output_lines) - len(run))
            else:
                key = normal(run[0], True).split()[:2]
                first = next((i for i in range(line, len(output_lines))
                              if normal(output_lines[i], True).split()[:2] == key), line)
            place = (first, min(len(output_lines), first + len(run)) - 1)
        out += output_lines[place[0]:place[1] + 1]
        line = place[1] + 1
    return out


def run_shell(text, home):
    env = {**os.environ, "HOME": str(home), "COLUMNS": "120"}
    for name in ("NO_COLOR", "OPVAL_MACHINE_FILE", "XDG_CACHE_HOME"):
        env.pop(name, None)
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", text], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_SECONDS)
    return done, time.monotonic() - started


def test_the_tour_reads_its_own_examples():
    """The parser finds the tour's commands and examples (a guard against a README edit that
    would leave the test running nothing)."""
    t = read_tour(README.read_text())
    assert len(t.commands) >= 30
    assert len(t.examples) >= 4
    assert any(c.exit_code == 1 for c in t.commands)
    assert all(ex.lines for ex in t.examples)


def test_the_readme_tour_runs_as_written(tmp_path):
    if not (ROOT / "build" / "opval").exists() or not (ROOT / "build/examples/plugins/libsgemm_tiled.so").exists():
        pytest.fail("run the README's first command (scripts/setup run) first: build/ lacks opval or the example plugins")
    text = README.read_text()
    t = read_tour(text)
    home = tmp_path / "home"
    home.mkdir()
    outputs, failures, total, refused = {}, [], 0.0, False
    for c in t.commands:
        done, seconds = run_shell(c.text, home)
        total += seconds
        output = done.stdout + done.stderr
        outputs[c.text.strip()] = done
        first = c.text.splitlines()[0]
        honest = next((v for k, v in HONEST_REFUSALS.items() if first.startswith(k)), None)
        if honest and done.returncode == honest[0] and re.search(honest[1], output):
            warnings.warn(f"`{first}` refused honestly; the examples that need the roofline are not compared:\n"
                          + output[-600:])
            refused = True
            continue
        if done.returncode != c.exit_code:
            failures.append(f"`{first}` exited {done.returncode}, the README says {c.exit_code}:\n{output[-2000:]}")
            continue
        for key, pattern in KEY_LINES.items():
            if key in c.text + "\n" and not re.search(pattern, output):
                failures.append(f"`{first}` does not show /{pattern}/:\n{output[-2000:]}")
        if re.match(r"(build/opval|\.venv/bin/python -m opval) run ", c.text) and \
                not re.search(r"(?:^|\n)\d+ passed, \d+ failed, \d+ skipped\n*$", done.stdout):
            failures.append(f"`{first}` does not end with its closing line:\n{done.stdout[-1000:]}")
    compared = [ex for ex in t.examples if not (refused and ex.command.startswith(NEEDS_THE_ROOFLINE))]
    failures += check_examples(README, text, compared, outputs, home)
    assert not failures, "\n\n".join(failures)
    assert total <= TOUR_BUDGET_SECONDS, f"the tour took {total:.0f} s, over its budget of {TOUR_BUDGET_SECONDS} s"


def check_examples(path, text, examples, outputs, home):
    """Each example against its command's output (run now unless `outputs` has it); with
    OPVAL_TOUR_REGENERATE=1 the examples are rewritten in `path` instead."""
    failures = []
    regenerate = os.environ.get("OPVAL_TOUR_REGENERATE") == "1"
    lines = text.split("\n")
    for ex in sorted(examples, key=lambda e: -e.start):  # from the end: line numbers stay valid
        done = outputs.get(ex.command.strip())
        if done is None:
            done, _ = run_shell(ex.command, home)
        out_lines = done.stdout.rstrip("\n").split("\n") if done.stdout else (done.stderr.rstrip("\n").split("\n"))
        if ex.numbers_aside:
            out_lines = [line for line in out_lines if not NOISE_LINE.match(line)]
        if done.returncode != ex.exit_code:
            failures.append(f"example `{ex.command}` exited {done.returncode}, {path.name} says {ex.exit_code}:\n"
                            + (done.stdout + done.stderr)[-2000:])
        runs, places = locate(ex, out_lines)
        if regenerate:
            lines[ex.start:ex.start + len(ex.lines)] = regenerated(ex, out_lines)
        elif any(p is None for p in places):
            missing = next(run for run, p in zip(runs, places) if p is None)
            failures.append(f"example of `{ex.command}` in {path.name} no longer matches its output (timings aside); "
                            f"first unmatched lines:\n" + "\n".join(missing[:5]) +
                            "\n--- output:\n" + "\n".join(out_lines[-40:]))
    if regenerate:
        path.write_text("\n".join(lines))
    return failures


DOCUMENTS_WITH_EXAMPLES = ["docs/PLUGINS.md"]


@pytest.mark.parametrize("document", DOCUMENTS_WITH_EXAMPLES)
def test_the_examples_of_the_docs_are_real_output(document, tmp_path):
    path = ROOT / document
    text = path.read_text()
    examples = read_tour(text, whole_document=True).examples
    assert examples
    home = tmp_path / "home"
    home.mkdir()
    failures = check_examples(path, text, examples, {}, home)
    assert not failures, "\n\n".join(failures)
