"""What coloured code and typeset maths cost (`make bench-render`; not part of the tests).

- The server: `render_markdown` on replies of several shapes, with and
  without the Pygments colours (a fence in an unknown language is not
  coloured), median of repeated runs. A conversation is rendered whenever it
  is shown, so this is paid on every page and after every turn.
- The browser: static/web/math.js's `renderMath` over a message of N formulas
  in headless Chromium (Debian's), with the vendored KaTeX.
- The bytes a first visit fetches for KaTeX (gzip -9; fonts load only when a
  formula needs them).

Prints a Markdown table; with --write appends it, with the machine and the
date, to bench/README.md.
"""

import gzip
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assistant_engine.foundation.highlight import highlight_code  # noqa: E402
from assistant_engine.foundation.markdown import render_markdown  # noqa: E402

CODE = (ROOT / "assistant_engine/foundation/markdown.py").read_text()  # real Python, about 4,000 characters
PROSE = "Zurich is lovely in **spring**: the lake, the old town and the hills. " * 20
FORMULAS = ["E=mc^2", "\\frac{1}{\\sqrt{1 - v^2/c^2}}", "\\sum_{i=1}^{n} x_i^2", "\\int_0^\\infty e^{-x}\\,dx"]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
RUNS = int(os.environ.get("BENCH_RENDER_RUNS", "30"))  # the median of so many runs (a smoke run: 2)


def median_ms(action, runs: int = RUNS, *, cached: bool = False) -> float:
    action()
    times = []
    for _ in range(runs):
        if not cached:
            highlight_code.cache_clear()
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def server_rows() -> list[str]:
    shapes = {
        "prose, 1,400 characters": PROSE,
        "prose and 10 formulas": PROSE + " ".join(f"${tex}$" for tex in FORMULAS * 3)[:400],
        f"a {len(CODE):,}-character Python block, coloured": f"```python\n{CODE}```",
        "the same block, plain (unknown language)": f"```unknown\n{CODE}```",
        "a 10,000-character Python block (the bound), coloured": f"```python\n{(CODE * 3)[:9_999]}\n```",
    }
    rows = [f"| server: render_markdown, {name} | {median_ms(lambda t=text: render_markdown(t)):.2f} ms |"
            for name, text in shapes.items()]
    again = median_ms(lambda: render_markdown(f"```python\n{CODE}```"), cached=True)
    return [*rows, f"| server: render_markdown, the {len(CODE):,}-character block again (cached) | {again:.2f} ms |"]


def browser_rows() -> list[str]:
    from playwright.sync_api import sync_playwright

    from tests.web.browser import CHROMIUM_ARGS

    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_content("<!doctype html><html><body><div id=root></div></body></html>")
        page.add_script_tag(path=str(ROOT / "assistant_engine/web/static/assistant/vendor/katex/katex.min.js"))
        math_js = (ROOT / "assistant_engine/web/static/assistant/math.js").read_text().split("\n// `node`'s text")[0]
        math_js = math_js.replace("import { gettext, interpolate } from './i18n.js';", "")
        math_js = math_js.replace("export function", "function") + "\nwindow.renderMath = renderMath;"
        page.add_script_tag(content=math_js)
        for count in (10, 100):
            spans = "".join(f'<span class="math">{FORMULAS[i % 4]}</span> ' for i in range(count))
            timing = page.evaluate("""([html, runs]) => { const times = [];
              for (let i = 0; i < runs; i += 1) {
                const root = document.getElementById('root'); root.innerHTML = html;
                const start = performance.now(); renderMath(root); times.push(performance.now() - start);
              }
              times.sort((a, b) => a - b); return times[Math.floor(times.length / 2)]; }""", [spans, min(RUNS, 20)])
            rows.append(f"| browser: renderMath, {count} formulas | {timing:.1f} ms |")
        browser.close()
    return rows


def bytes_rows() -> list[str]:
    vendor = ROOT / "assistant_engine/web/static/assistant/vendor/katex"
    js = len(gzip.compress((vendor / "katex.min.js").read_bytes(), 9))
    css = len(gzip.compress((vendor / "katex.min.css").read_bytes(), 9))
    fonts = {path.name: path.stat().st_size for path in (vendor / "fonts").glob("*.woff2")}
    common = fonts["KaTeX_Main-Regular.woff2"] + fonts["KaTeX_Math-Italic.woff2"]
    return [f"| bytes: katex.min.js + katex.min.css, gzip -9, once (then cached) | {(js + css) / 1024:.0f} KiB |",
            f"| bytes: the two fonts most formulas need (Main, Math italic), woff2 | {common / 1024:.0f} KiB |"]


def main() -> None:
    rows = ["| what | median |", "|---|---|", *server_rows(), *browser_rows(), *bytes_rows()]
    table = "\n".join(rows)
    print(table)
    if "--write" in sys.argv:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        heading = (f"### {when} — code colours and maths (`make bench-render`) — {platform.machine()}, "
                   f"{os.cpu_count()} cores, Python {platform.python_version()}; load average {load}")
        with (ROOT / "bench/README.md").open("a") as readme:
            readme.write(f"\n{heading}\n\n{table}\n")


if __name__ == "__main__":
    main()
