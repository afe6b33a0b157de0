"""What reads untrusted text (a file, a tool result, a reply, a message) costs
linear time: the attacker's inputs below made the old patterns backtrack
quadratically (neutralize: 1.8 s of CPU for "<" and 8,000 spaces, about 40
minutes for 300,000; the Markdown export's heading pattern likewise).

Each runs in a child process whose CPU time the kernel caps at a hundred
times what the linear code needs (RLIMIT_CPU, like the PDF reader's): CPU
time, not the clock, so a busy machine can't fail it."""

import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPU_SECONDS = 5

CASES = [
    ("from assistant.app_events import neutralize as read", '"<" + " " * 300_000'),
    ("from assistant.app_events import neutralize as read", '"</application" + "\\u200b" * 300_000'),
    ("from assistant.app_events import neutralize as read", '("<" + " " * 60) * 20_000'),
    ("from conversations.inert_markdown import inert_markdown as read", '"- " * 150_000 + "5"'),
    ("from conversations.inert_markdown import inert_markdown as read", '"[" * 300_000'),
    ("from conversations.inert_markdown import inert_markdown as read", '"`a" * 150_000'),
    ("from conversations.inert_markdown import inert_markdown as read", '"](" + " " * 300_000 + "x"'),
    ("from conversations.sniff import text_of as read", '"a" * 10_000_000'),
]


def capped():
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))


@pytest.mark.parametrize(("reader", "text"), CASES)
def test_reading_the_attackers_text_takes_linear_time(reader, text):
    value = text if "sniff" not in reader else f"({text}).encode()"
    program = f"{reader}\nresult = read({value})\nprint(len(result))"
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True,  # noqa: S603
                          preexec_fn=capped, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])  # -24: ended at its CPU bound
    assert int(done.stdout) > 0
