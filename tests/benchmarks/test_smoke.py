"""Every `make bench*` target at its smallest size (issue 36.4): a benchmark run
only by hand rots (a migration's new NOT NULL column broke `make bench-scale`'s
seed, and nobody could re-check its claim). Each recipe is read from the
Makefile and run as written, without `--write` (the README is the benches' to
append to, not a test's: `git status` stays clean). What is asserted is that
it finishes and prints its table, never its figures (this machine is noisy).
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]

# The smallest size of each target (its own knobs) and a line of the table it prints.
SMOKE = {
    "bench": ({"BENCH_TURNS": "2", "BENCH_MESSAGES": "20", "BENCH_REPEAT": "1", "BENCH_LONG_TURNS": "2",
               "BENCH_LONG_CACHE_TURNS": "2"}, "| 5,000 messages |"),
    "bench-compare": ({"BENCH_ROUNDS": "2", "BENCH_BATCH": "1"}, "django-ai-assistant"),
    "bench-reservation": ({"BENCH_TURNS": "1"}, "|---"),
    "bench-render": ({"BENCH_RENDER_RUNS": "2"}, "|---"),
    "bench-first-word": ({"BENCH_TURNS": "2", "BENCH_PAUSE": "0"}, "|---"),
    "bench-scale": ({"BENCH_SCALE_ORGS": "2", "BENCH_SCALE_ROUNDS": "1"}, "| erasure of a person"),
    "bench-turns": ({"BENCH_TURNS_ARGS": "--turns 3 --model-seconds 0.5"}, "|---"),
    "bench-profile": ({"BENCH_PROFILE_ARGS": "--turns 3 --model-seconds 0.5"},
                      "| worker: own time (top of the stack) |"),
}
# Run by a test of their own, with its assertions: not twice.
SMOKED_ELSEWHERE = {"bench-injection": "tests/injection/test_suite_sample.py"}


def makefile_targets() -> dict[str, list[str]]:
    """Each bench target's recipe lines, as the Makefile states them."""
    targets, current = {}, None
    for line in (ROOT / "Makefile").read_text().splitlines():
        header = re.match(r"^(bench[\w-]*):", line)
        if header:
            current = header.group(1)
            targets[current] = []
        elif current and line.startswith("\t"):
            targets[current].append(line.strip())
        elif not line.startswith("\t"):
            current = None
    return targets


def as_smoke_command(recipe_line: str, extra_args: str, knobs=os.environ) -> list[str]:
    """The recipe's command with this virtualenv's Python, no --write, its `$(KNOB)`s from `knobs`."""
    command = recipe_line.replace("$(PY)", sys.executable)
    command = command.replace("$(if $(WRITE),--write)", "").replace("--write", "")
    command = re.sub(r"\$\((\w+)\)", lambda name: knobs.get(name[1], ""), command)
    return shlex.split(f"{command} {extra_args}")


def test_every_bench_target_has_a_smoke_run():
    assert set(makefile_targets()) == set(SMOKE) | set(SMOKED_ELSEWHERE)


@pytest.fixture(scope="module")
def peer_virtualenv():
    """bench-compare's peer (django-ai-assistant, pinned) in its own virtualenv, as the target makes it."""
    subprocess.run(["make", "-s", ".run/peer-venv/.installed"], cwd=ROOT, check=True, capture_output=True,
                   timeout=900)


@pytest.mark.parametrize("target", sorted(SMOKE))
def test_the_bench_target_runs_at_its_smallest_size_and_prints_its_table(target, request):
    if target == "bench-compare":
        request.getfixturevalue("peer_virtualenv")
    knobs, table_line = SMOKE[target]
    env = {**os.environ, **knobs}
    env.pop("DATABASE_URL", None)  # each bench makes its own database, whatever the suite runs on
    extra_args = env.pop("BENCH_TURNS_ARGS", "")
    output = ""
    for line in makefile_targets()[target]:
        result = subprocess.run(as_smoke_command(line, extra_args, env), cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{line}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        output += result.stdout
    assert table_line in output, output[-3000:]
