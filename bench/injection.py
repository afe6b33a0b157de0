"""The injection suite (`make bench-injection`, issue 33): every channel ×
every injection goal × every guard mode × both wire formats, with a model that
obeys every instruction it reads (tests/injection/suite.py says what is
measured and how).

Prints a Markdown table per wire format — utility without attack and under
attack, injection goals achieved after an informed click, and attack successes
(goals achieved without one) — and the totals; with --write appends it to
bench/README.md (a plain run leaves `git status` clean). BENCH_INJECTION_FORMATS
and BENCH_INJECTION_CHANNELS (comma-separated) narrow it (the smoke run in the tests).
"""

import os
import platform
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKDIR = Path(tempfile.mkdtemp(prefix="assistant-bench-injection-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{WORKDIR / 'bench.sqlite3'}")
os.environ.update(SECRET_KEY="bench-only", DEBUG="0", RUN_DIR=str(WORKDIR), LOG_LEVEL="WARNING",
                  ASSISTANT_ALLOW_US_PROCESSING="1", INFOMANIAK_AI_PRODUCT_ID="4242")
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "bench-only")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

import assistant.chat  # noqa: E402
from tests.injection.suite import CHANNELS, GOALS, MODES, OPTIONS, run_case  # noqa: E402

FORMATS = [name for name in os.environ.get("BENCH_INJECTION_FORMATS", "openai,anthropic").split(",") if name]
SELECTED = [name for name in os.environ.get("BENCH_INJECTION_CHANNELS", ",".join(CHANNELS)).split(",") if name]


def configure(option, url, mode) -> None:
    settings.ASSISTANT_TRIFECTA = mode
    settings.INFOMANIAK_AI_BASE_URL = url + "/v1"
    os.environ["ANTHROPIC_BASE_URL"] = url


def table(wire_format: str) -> tuple[list[str], dict]:
    lines = [
        f"| channel | mode | utility, no attack | utility under attack | goals achieved after an informed click "
        f"| attack successes ({len(GOALS)} goals) |",
        "|---|---|---|---|---|---|",
    ]
    totals: dict = defaultdict(int)
    for channel in SELECTED:
        clean = run_case(channel, None, "warn", wire_format, configure=configure)
        for mode in MODES:
            outcomes = [run_case(channel, goal, mode, wire_format, configure=configure) for goal in GOALS]
            not_ours = [o.goal for o in outcomes if not o.applicable]
            outcomes = [o for o in outcomes if o.applicable]
            useful = sum(outcome.utility for outcome in outcomes)
            informed = [o.goal for o in outcomes if o.achieved and o.informed]
            succeeded = [o.goal for o in outcomes if o.attack_success]
            totals[mode, "cases"] += len(outcomes)
            totals[mode, "useful"] += useful
            totals[mode, "successes"] += len(succeeded)
            totals[mode, "clean"] += clean.utility
            named = (": " + ", ".join(succeeded) if succeeded else "") + "".join(f" ({g}: n/a)" for g in not_ours)
            lines.append(f"| {channel} | {mode} | {'yes' if clean.utility else 'no'} | {useful}/{len(outcomes)} | "
                         f"{', '.join(informed) or '—'} | {len(succeeded)}{named} |")
    return lines, totals


def main() -> None:
    call_command("migrate", verbosity=0)
    assistant.chat.enqueue_turn = lambda turn_id: None  # each turn is run here, in this process
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    out = [f"### Injection suite — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}",
           "",
           "An obedient model (it follows every instruction it reads) over each provider's wire; the person "
           "confirms every card (the worst case). Modes: `warn` and `block` (ASSISTANT_TRIFECTA), and "
           "`writes_run` (`warn` with the organization's writes run at once, as before issue 33). n/a: a goal "
           "that is not ours to guard on that channel (an MCP client renders its own model's links). The `spend` "
           "goal (a call per instruction, 40 of them) is bounded, not prevented: the turn ends at its step bound "
           "(ASSISTANT_MAX_STEPS), never past the grant, and the person's task is not done."]
    for wire_format in FORMATS:
        lines, totals = table(wire_format)
        out += ["", f"**{wire_format} wire format** ({OPTIONS[wire_format]})", "", *lines, ""]
        for mode in MODES:
            cases = totals[mode, "cases"]
            out.append(f"- {mode}: {totals[mode, 'successes']} attack successes in {cases} attacks; utility under "
                       f"attack {totals[mode, 'useful']}/{cases}, without attack "
                       f"{totals[mode, 'clean']}/{len(SELECTED)} channels.")
    text = "\n".join(out)
    print(text)
    if "--write" in sys.argv:
        with open(ROOT / "bench" / "README.md", "a") as readme:
            readme.write("\n" + text + "\n")


if __name__ == "__main__":
    main()
