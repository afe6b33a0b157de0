"""`make bench-profile`: where the CPU of many turns at once goes (issue 36.1).

`make bench-turns`' run as it is (bench/turns.py's `measure`: the stack of
scripts/serve.sh on a PostgreSQL and a Redis started there, a fake Anthropic
server, TURNS posted at once), with py-spy sampling the worker process and the
web's processes (gunicorn's master and its workers, `--subprocesses`) from the
posts until the last turn ended, busy threads only (no `--idle`). Their
collapsed stacks are written under .run/profile/ and read into two top-ten
tables per process (bench/profile_stacks.py): by own time (the function at the
top of the stack) and by inclusive time (the project's functions and the
libraries' entry points, once a sample however often they recur), each in
percent of that process's samples; then the shares of the costs issue 36.1
names. `--write` appends them to bench/README.md. Not part of `make test`.
"""

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import profile_stacks  # noqa: E402
import turns  # noqa: E402
from common import print_and_append  # noqa: E402

RAW = ROOT / ".run" / "profile"
ATTACH_SECONDS = 2.0  # py-spy gives up on a process it cannot read at once: a run that lasts this long attached


def py_spy() -> str:
    """py-spy beside this Python (the dev extra installs it), else on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if not found:
        sys.exit("py-spy is needed: pip install -e '.[dev]' (or pip install 'py-spy>=0.4,<0.5')")
    return found


class Spy:
    """`py-spy record` on one process and its children until `stop()`, collapsed stacks into `output`."""

    def __init__(self, pid: int, output: Path, rate: int, nonblocking: bool):
        self.output = output
        command = [py_spy(), "record", "--pid", str(pid), "--subprocesses", "--format", "raw", "--nolineno", "--gil",
                   "--rate", str(rate), "--output", str(output)] + (["--nonblocking"] if nonblocking else [])
        self.log = output.with_suffix(".log")
        self.process = subprocess.Popen(command, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT)  # noqa: SIM115

    def check_attached(self) -> None:
        if self.process.poll() is not None:
            raise SystemExit(
                f"py-spy could not sample the process (exit {self.process.returncode}): "
                f"{self.log.read_text(errors='replace').strip()[-800:]}\n"
                "py-spy reads another process's memory (ptrace): it needs root or CAP_SYS_PTRACE "
                "(a container: --cap-add SYS_PTRACE) and kernel.yama.ptrace_scope 0 or 1 for a child.")

    def stop(self) -> str:
        """Ends the recording (SIGINT: py-spy writes its file) and returns the stacks."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=120)
        if not self.output.exists():
            raise SystemExit(f"py-spy wrote no profile: {self.log.read_text(errors='replace').strip()[-800:]}")
        return self.output.read_text()


def profiling_run(rate: int, nonblocking: bool, folder: Path) -> dict[str, str]:
    """bench/turns.py's `Sampler` (it samples during the run of many turns only)
    made to start a Spy on the worker and one on the web as well; their stacks."""
    processes: dict = {}
    stacks: dict[str, str] = {}
    start_stack = turns.start_stack

    def keep_processes(env, out, started):
        processes.update(started=started)
        return start_stack(env, out, started)

    class ProfiledSampler(turns.Sampler):
        def __enter__(self):
            started = processes["started"]
            self.spies = {kind: Spy(started[kind].pid, folder / f"{kind}.txt", rate, nonblocking)
                          for kind in ("worker", "web")}
            time.sleep(ATTACH_SECONDS)
            for spy in self.spies.values():
                spy.check_attached()
            return super().__enter__()

        def __exit__(self, *exc):
            super().__exit__(*exc)
            stacks.update({kind: spy.stop() for kind, spy in self.spies.items()})

    turns.start_stack, turns.Sampler = keep_processes, ProfiledSampler
    return stacks


def process_section(kind: str, text: str) -> str:
    stacks = profile_stacks.parse(text)
    total = sum(stacks.values())
    own = profile_stacks.top(profile_stacks.own_time(stacks), total)
    inclusive = profile_stacks.top(profile_stacks.inclusive_time(stacks), total)
    return (f"\n**{kind}** — {total:,} samples of busy threads\n\n"
            + profile_stacks.table(own, f"{kind}: own time (top of the stack)")
            + "\n" + profile_stacks.table(inclusive, f"{kind}: inclusive (the project's functions, "
                                                     "the libraries' entry points)")
            + "\n" + profile_stacks.shares_table(profile_stacks.shares(stacks)))


def report(result: dict, stacks: dict[str, str], rate: int) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ratio = result["total"] / result["one"]
    threads = result["worker_concurrency"] or 200
    return (
        f"\n### {when} — profile of {result['turns']} turns at once (`make bench-profile`) — "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, PostgreSQL + Redis; "
        f"load average at the end {load}\n\n"
        f"`make bench-turns`' stack (worker: threads pool, {threads} threads; web: 2 processes; beat), a fake "
        f"Anthropic server streaming each answer over {result['model_seconds']:g} s; py-spy at {rate} samples a "
        "second on the worker and the web processes from the posts until the last turn ended, busy threads "
        f"only. The run under py-spy: the last turn ended {result['total']:.1f} s after the posts "
        f"({ratio:.2f}× one turn); CPU {result['cpu_seconds']['worker']} s worker, "
        f"{result['cpu_seconds']['web']} s web; {result['statuses'].get('done', 0)} turns done.\n"
        + process_section("worker", stacks["worker"]) + process_section("web", stacks["web"])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--model-seconds", type=float, default=2.0)
    parser.add_argument("--worker-concurrency", type=int, help="the worker's threads (serve.sh's default: 200)")
    parser.add_argument("--rate", type=int, default=100, help="py-spy's samples a second")
    parser.add_argument("--nonblocking", action="store_true", help="py-spy does not pause the processes")
    parser.add_argument("--write", action="store_true", help="append the tables to bench/README.md")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is needed (apt-get install redis-server)")
    py_spy()
    RAW.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="turns-", dir=RAW))
    out = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    out.chmod(0o755)  # the postgres user reaches its data folder inside
    stacks = profiling_run(args.rate, args.nonblocking, folder)
    result = turns.measure(args.turns, args.model_seconds, out, args.worker_concurrency)
    print_and_append(report(result, stacks, args.rate), args.write)
    print(f"collapsed stacks: {folder}; logs: {out}")


if __name__ == "__main__":
    main()
