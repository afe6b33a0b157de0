"""Collapsed stacks (py-spy's `--format raw`) into top-ten tables and shares.

A line of py-spy's raw output is one stack, root first, frames joined by `;`,
then the number of samples that had it: `process 12:"celery …";Thread.run
(threading.py);Stream.__next__ (anthropic/_streaming.py) 7`. A frame is named
here `file:function` (`anthropic/_streaming.py:Stream.__next__`); py-spy
already names a library's file by its package, the project's by its package
path (`assistant/loop.py`). Pure functions: no Django, no py-spy.
"""

import re
from collections import Counter
from collections.abc import Iterable

# The project's top-level packages (pyproject.toml's import-linter root_packages).
PROJECT = ("assistant", "assistant_engine", "conversations", "credits", "config", "workspace")
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")

Stack = tuple[str, ...]

# What a share is made of: a label and the files (a regular expression on the
# frame's `file:function`) it stands for. Redis's frames reached from kombu or
# Celery are Celery's traffic (the broker, the results), not the turns' publishes.
CATEGORIES = (
    ("SSE parsing and the SDKs' models (anthropic/, openai/ but their HTTP client; pydantic)",
     r"^(anthropic|openai)/(?!_base_client\.py)|^pydantic(_core)?/"),
    ("the SDKs' HTTP to the model (their _base_client.py; httpx, httpcore and their ...2 forks)",
     r"^(anthropic|openai)/_base_client\.py|^(httpx|httpcore)2?/|^anyio/"),
    ("JSON encoding and decoding (json, orjson, kombu's and Django's json modules)",
     r"^json/|^orjson|(^|/)json\.py:"),
    ("Django ORM compilation (django/db/models/: sql/compiler.py, query.py, expressions …)", r"^django/db/models/"),
    ("Django's database layer (django/db/backends/, utils.py, transaction.py)",
     r"^django/db/(backends/|utils\.py|transaction\.py|__init__\.py)"),
    ("psycopg and its pool", r"^psycopg(_pool)?/"),
    ("Redis publishes (redis/, not reached from Celery or kombu)", r"^redis/"),
    ("Celery and kombu (celery/, kombu/, billiard/, vine/, amqp/; their Redis too)",
     r"^(celery|kombu|billiard|vine|amqp|click)/"),
    ("Django's request handling (handlers, middleware, http, urls, templates; asgiref; DRF)",
     r"^django/|^asgiref/|^rest_framework/"),
    ("the ASGI server and its loop (gunicorn, uvicorn, uvloop, asyncio, h11, httptools)",
     r"^(gunicorn|uvicorn|uvicorn_worker|uvloop|asyncio|h11|httptools|starlette|websockets)/|^uvicorn_worker\.py"),
    ("logging", r"^logging/"),
)
CELERY = dict(CATEGORIES)["Celery and kombu (celery/, kombu/, billiard/, vine/, amqp/; their Redis too)"]
PROJECT_CODE = "the project's own code (its frames at the top of the stack)"
OTHER = "the rest (the standard library, other packages, reached from none of the above)"


def frame_name(raw: str) -> str:
    """`Stream.__next__ (anthropic/_streaming.py:120)` → `anthropic/_streaming.py:Stream.__next__`."""
    match = FRAME.match(raw.strip())
    return f"{match['file']}:{match['function']}" if match else raw.strip()


def parse(text: str) -> Counter[Stack]:
    """py-spy's raw lines → samples per stack (root first), the `process …` frame left out."""
    stacks: Counter[Stack] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if frames[0].startswith("process "):
            frames = frames[1:]
        stacks[tuple(frame_name(frame) for frame in frames)] += int(count)
    return stacks


def is_project(frame: str) -> bool:
    return frame.split("/", 1)[0] in PROJECT


def package(frame: str) -> str:
    """A frame's package (its file's first folder, or its module's name)."""
    return re.split(r"[/.:]", frame, maxsplit=1)[0]


def top(counts: Counter[str], total: int, size: int = 10) -> list[tuple[str, float]]:
    """The `size` largest, as percent of `total` (the most first; equal ones by name)."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]
    return [(name, 100 * samples / max(total, 1)) for name, samples in ranked]


def own_time(stacks: Counter[Stack]) -> Counter[str]:
    """Samples per function at the top of the stack (where the CPU was)."""
    owned: Counter[str] = Counter()
    for stack, samples in stacks.items():
        if stack:
            owned[stack[-1]] += samples
    return owned


def entered(stack: Stack) -> set[str]:
    """The project's functions of a stack and the libraries' entry points (a
    library's frame called by the project's), each once however often it recurs."""
    names = set()
    for index, frame in enumerate(stack):
        if is_project(frame) or (index and is_project(stack[index - 1])):
            names.add(frame)
    return names


def inclusive_time(stacks: Counter[Stack]) -> Counter[str]:
    """Samples per function that was anywhere on the stack (`entered`'s
    functions only). Functions on exactly the same stacks (a chain of wrappers:
    middleware, decorators) are one row, named by the innermost, `(+N around it)`."""
    on: dict[str, set[int]] = {}
    depth: dict[str, int] = {}
    for number, stack in enumerate(stacks):
        for index, frame in enumerate(stack):
            if frame in entered(stack):
                on.setdefault(frame, set()).add(number)
                depth[frame] = max(depth.get(frame, 0), index)
    chains: dict[frozenset[int], list[str]] = {}
    for name, numbers in on.items():
        chains.setdefault(frozenset(numbers), []).append(name)
    weights = list(stacks.values())
    counted: Counter[str] = Counter()
    for numbers, names in chains.items():
        inner = max(names, key=lambda name: (depth[name], name))
        label = f"{inner} (+{len(names) - 1} around it)" if len(names) > 1 else inner
        counted[label] = sum(weights[number] for number in numbers)
    return counted


def category_of(frame: str) -> str | None:
    return next((label for label, files in CATEGORIES if re.search(files, frame)), None)


def frame_categories(stack: Stack) -> list[str | None]:
    """Each frame's category; Redis's frames under kombu's or Celery's are Celery's."""
    labels = [category_of(frame) for frame in stack]
    redis = CATEGORIES[6][0]
    for index, label in enumerate(labels):
        if label == redis:
            caller = next((frame for frame in reversed(stack[:index]) if not frame.startswith("redis/")), "")
            if re.search(CELERY, caller):
                labels[index] = CATEGORIES[7][0]
    return labels


def nearest(stack: Stack, labels: list[str | None]) -> str:
    """The share a sample goes to: from the top of the stack down, the first
    frame of a category; the project's own frame first met stops the walk."""
    for frame, label in zip(reversed(stack), reversed(labels), strict=True):
        if is_project(frame):
            return PROJECT_CODE
        if label:
            return label
    return OTHER


def shares(stacks: Counter[Stack]) -> list[tuple[str, float, float]]:
    """Per category: its own share (each sample goes to exactly one, `nearest`)
    and its inclusive one (samples with any frame of it), in percent."""
    total = sum(stacks.values())
    own: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    for stack, samples in stacks.items():
        labels = frame_categories(stack)
        own[nearest(stack, labels)] += samples
        for label in set(labels) - {None}:
            anywhere[label] += samples
    rows = [label for label, _ in CATEGORIES] + [PROJECT_CODE, OTHER]
    return [(label, 100 * own[label] / max(total, 1), 100 * anywhere[label] / max(total, 1)) for label in rows]


def table(rows: Iterable[tuple[str, float]], heading: str) -> str:
    lines = [f"| {heading} | % of samples |", "|---|---|"]
    for name, share in rows:
        function, _, around = name.partition(" (+")
        lines.append(f"| `{function}`{' (+' + around if around else ''} | {share:.1f} |")
    return "\n".join(lines) + "\n"


def shares_table(rows: Iterable[tuple[str, float, float]]) -> str:
    lines = ["| share | own % (each sample once) | inclusive % (on the stack) |", "|---|---|---|"]
    lines += [f"| {label} | {own:.1f} | {'' if label in (PROJECT_CODE, OTHER) else f'{anywhere:.1f}'} |"
              for label, own, anywhere in rows]
    return "\n".join(lines) + "\n"
