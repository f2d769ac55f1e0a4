"""Viewer speed in headless Chromium: first paint, expand, search, long tasks, frame times.

Reproducible: synthetic GPT-like Reports from ``make_synthetic_report.py`` are written as real
standalone pages (``nstviz.render.html.render_html``) and opened from ``file://`` in Debian's
Chromium through ``tests/viewer/driver.py``. Timings come from the page: the Performance API
(``performance.now()`` at the first ``data-nstviz-ready``, waited for without running anything of
the driver's in the page: Playwright's own waiting ran its script on the page's main thread
during the load), the viewer's own step timings
(``el.__nstviz.timings()``), a ``longtask`` PerformanceObserver installed before the page's
scripts, and requestAnimationFrame intervals while zooming/panning with the real mouse wheel.

    python benchmarks/bench_viewer.py            # all scenarios
    python benchmarks/bench_viewer.py --quick    # 2k and 10k only
    python benchmarks/bench_viewer.py --load     # only: bytes per node and load (3 runs at 2k/10k/50k)

Bytes per node: the page file (gzip+base64 Report inside) and the Report JSON it holds ("raw"),
over the main graph's nodes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests" / "viewer"))
sys.path.insert(0, str(REPO))

from driver import run  # noqa: E402
from make_synthetic_report import make_report  # noqa: E402

from nstviz.render.html import render_html, report_json_for_html  # noqa: E402

HOOK = "document.querySelector('#nstviz-root').__nstviz"
# resolves once a sliced layout is done (the busy badge hidden again), with the wall time
WAIT_IDLE = ("() => new Promise((r) => { const t0 = performance.now(); const chk = () => {"
             " const b = document.querySelector('.nsv-busy'); if (b && b.hidden && performance.now() - t0 > 200)"
             " r(performance.now() - t0); else setTimeout(chk, 20); }; chk(); })")
RAF_PROBE = """() => new Promise((resolve) => {
  const times = []; let last = performance.now(); const end = last + %d;
  function tick(t) { times.push(t - last); last = t; if (t < end) requestAnimationFrame(tick); else resolve(times); }
  requestAnimationFrame(tick);
})"""


def page_for(n: int, flat: bool, tmp: Path) -> tuple[Path, int, float]:
    report = make_report(n, flat=flat)
    page = render_html(report)
    path = tmp / f"r{n}{'-flat' if flat else ''}.html"
    path.write_bytes(page.encode("utf-8"))
    nodes = len(report.runs["nonstrict"].graphs[-1].nodes)
    return path, nodes, len(page.encode("utf-8"))


def scenario_load(tmp: Path, runs: int = 3) -> None:
    """Bytes per node (page file and raw JSON) and the load: ready, the viewer's steps, longest task."""
    print("\n## load: page bytes per node (file, raw JSON), ready after navigation, longest main-thread task "
          f"({runs} runs each; targets: <= 300 ms ready at 10k, no task > 200 ms at 50k)")
    for n in (2000, 10000, 50000):
        report = make_report(n)
        path, nodes, size = page_for(n, False, tmp)
        raw = len(report_json_for_html(report).encode("utf-8"))
        rows = []
        for _ in range(runs):
            out = load(path, [{"do": "wait", "ms": 500}, {"do": "eval", "js": "window.__bench.longTasks"}])
            ready, timings, lts = out["results"][0], out["results"][1], out["results"][6]
            rows.append((ready, max([t["duration"] for t in lts] or [0]), timings))
        steps, pane = rows[-1][2].get("steps", {}), rows[-1][2]["panes"][0]
        print(f"  {nodes} nodes: page {size / 1e3:.0f} kB = {size / nodes:.0f} B/node (raw JSON {raw / nodes:.0f} B/node); "
              f"ready {', '.join(f'{r[0]:.0f}' for r in rows)} ms; longest task {', '.join(f'{r[1]:.0f}' for r in rows)} ms")
        print("    last run's steps (ms after navigation): " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(steps.items(), key=lambda kv: kv[1]))
              + "; pane ms: " + ", ".join(f"{k} {pane[k]:.0f}" for k in ("modelMs", "treeMs", "layoutMs", "drawMs") if k in pane))


def navtext(nav: dict) -> str:
    return f"(file read {nav['responseEnd']:.0f} ms, HTML parsed {nav['domInteractive']:.0f} ms, DOMContentLoaded {nav['dcl']:.0f} ms)"


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def load(path: Path, extra_steps: list[dict] | None = None, viewport=(1400, 900)) -> dict:
    steps = [
        {"do": "ready", "quiet": True, "timeout_ms": 60000},  # nothing of the driver's runs in the page meanwhile
        {"do": "eval", "js": f"{HOOK}.timings()"},
        {"do": "eval", "js": "window.__bench.longTasks"},
        {"do": "eval", "js": f"(() => {{ const p = {HOOK}.panes()[0]; return {{nodes: p.nodes.length, groups: p.groups.length, total: p.totalNodes}}; }})()"},
        {"do": "eval", "js": "(() => { const n = performance.getEntriesByType('navigation')[0]; return {responseEnd: n.responseEnd, domInteractive: n.domInteractive, dcl: n.domContentLoadedEventEnd}; })()"},
    ]
    return run({"page": str(path), "viewport": list(viewport), "wait_until": "commit", "steps": steps + (extra_steps or [])})


def scenario_flat_2k(tmp: Path) -> None:
    path, n, size = page_for(2000, True, tmp)
    out = load(path)
    ready, timings, longtasks, drawn, nav = out["results"][:5]
    print(f"\n## flat ATen graph, {n} nodes (page {size / 1e6:.2f} MB)")
    print(f"  ready after navigation: {ready:.0f} ms {navtext(nav)}; viewer first paint {timings['firstPaintMs']:.0f} ms "
          f"(decode {timings['decodeMs']:.0f} ms); drawn boxes {drawn['nodes']} nodes + {drawn['groups']} groups")
    print(f"  longest main-thread task: {max([t['duration'] for t in longtasks] or [0]):.0f} ms  [target: first complete paint <= 1500 ms]")


def scenario_10k(tmp: Path) -> None:
    path, n, size = page_for(10000, False, tmp)
    steps = [
        {"do": "eval", "js": f"{HOOK}.panes()[0].groups.filter(g => !g.expanded).sort((a, b) => b.nodes - a.nodes).map(g => [g.key, g.nodes])"},
    ]
    out = load(path, steps)
    ready, timings, _longtasks, drawn, nav, collapsed = out["results"][:6]
    print(f"\n## GPT-like ATen graph, {n} nodes, collapsed by module (page {size / 1e6:.2f} MB, {size / n:.0f} B/node)")
    print(f"  ready after navigation: {ready:.0f} ms {navtext(nav)}; viewer first paint {timings['firstPaintMs']:.0f} ms "
          f"(decode {timings['decodeMs']:.0f} ms); {drawn['nodes']} nodes + {drawn['groups']} groups drawn  [target <= 1000 ms]")
    # expand each collapsed top-level group (click through the real mouse), worst case reported
    key, key_nodes = collapsed[0] if collapsed else (None, 0)
    expand_steps: list[dict] = []
    if key:
        expand_steps += [
            {"do": "click", "selector": "button[title='fit to view (0)']"},
            {"do": "click_node", "pane": 0, "name": key},
            {"do": "eval", "js": f"{HOOK}.timings().panes[0]"},
            {"do": "eval", "js": f"{HOOK}.panes()[0].groups.filter(g => !g.expanded).length"},
        ]
    for q in ("addmm", "module:transformer.h.17.attn", "gelu", "zzz-no-match"):
        expand_steps += [{"do": "fill", "selector": ".nsv-search", "text": q}, {"do": "eval", "js": f"[{HOOK}.timings().lastSearchMs, {HOOK}.panes()[0].hits.length]"}]
    expand_steps += [
        {"do": "click", "selector": "button[title='expand all groups']", "settle_ms": 0},
        {"do": "eval", "js": WAIT_IDLE},
        {"do": "eval", "js": f"[{HOOK}.timings().panes[0], {HOOK}.panes()[0].nodes.length]"},
        {"do": "eval", "js": f"{HOOK}.panes()[0].frameTimes.length"},
    ]
    # smooth zoom/pan with everything visible (fit): wheel events + rAF intervals
    wheel = [["move", 700, 500]] + [["wheel", 0, 40] for _ in range(15)] + [["wheel", 0, -40] for _ in range(15)]
    expand_steps += [
        {"do": "eval", "js": "(() => { window.__rafStart = performance.now(); return true; })()"},
        {"do": "mouse", "moves": wheel},
        {"do": "eval", "js": RAF_PROBE % 50},
        {"do": "eval", "js": f"{HOOK}.panes()[0].frameTimes"},
    ]
    out = run({"page": str(path), "viewport": [1400, 900], "steps": [{"do": "ready", "timeout_ms": 60000}, *expand_steps]})
    res = out["results"][1:]
    i = 0
    if key:
        t = res[2]
        print(f"  expand the largest collapsed group '{key}' ({key_nodes} nodes): {t.get('lastToggleMs', float('nan')):.0f} ms (layout {t.get('lastLayoutMs', float('nan')):.0f} ms)  [target <= 300 ms]")
        i = 4
    for q in ("addmm", "module:transformer.h.17.attn", "gelu", "zzz-no-match"):
        ms, hits = res[i + 1]
        print(f"  search {q!r}: {ms:.1f} ms, {hits} hits  [target <= 100 ms]")
        i += 2
    (tall, nodes_drawn) = res[i + 2]
    print(f"  expand ALL groups: {tall.get('lastLayoutMs', float('nan')):.0f} ms layout; {nodes_drawn} nodes laid out")
    frames = res[-1]
    print(f"  zoom/pan with {nodes_drawn} nodes in view (fit): draw time p50 {pct(frames, 50):.1f} ms, p95 {pct(frames, 95):.1f} ms, "
          f"max {max(frames):.1f} ms over {len(frames)} frames")
    # rAF cadence while zooming/panning continuously
    cont = [["move", 700, 500]]
    for k in range(40):
        cont.append(["wheel", 25 * ((k % 4) - 1.5), 30 * (1 if k % 8 < 4 else -1)])
    out2 = run({"page": str(path), "viewport": [1400, 900], "steps": [
        {"do": "ready", "quiet": True, "timeout_ms": 60000},  # nothing of the driver's runs in the page meanwhile
        {"do": "click", "selector": "button[title='expand all groups']", "settle_ms": 0},
        {"do": "eval", "js": WAIT_IDLE},
        {"do": "eval", "js": "(() => { window.__raf = []; let last = performance.now(); const loop = (t) => { window.__raf.push(t - last); last = t; if (window.__raf.length < 600) requestAnimationFrame(loop); }; requestAnimationFrame(loop); return true; })()"},
        {"do": "mouse", "moves": cont},
        {"do": "wait", "ms": 300},
        {"do": "eval", "js": "window.__raf.slice(1)"},
        {"do": "eval", "js": f"{HOOK}.panes()[0].frameTimes.slice(-60)"},
    ]})
    raf, draws = out2["results"][6], out2["results"][7]
    print(f"  continuous wheel pan/zoom: frame interval p50 {pct(raf, 50):.1f} ms, p95 {pct(raf, 95):.1f} ms, max {max(raf):.1f} ms "
          f"({len(raf)} frames); draw p95 {pct(draws, 95):.1f} ms")


def scenario_50k(tmp: Path) -> None:
    path, n, size = page_for(50000, False, tmp)
    out = load(path, [{"do": "wait", "ms": 500}, {"do": "eval", "js": "window.__bench.longTasks"}])
    ready, timings, _lt, drawn, nav, _w, longtasks = out["results"][:7]
    worst = max([t["duration"] for t in longtasks] or [0])
    print(f"\n## GPT-like ATen graph, {n} nodes (page {size / 1e6:.1f} MB)")
    print(f"  ready after navigation: {ready:.0f} ms {navtext(nav)}; viewer first paint {timings['firstPaintMs']:.0f} ms (decode {timings['decodeMs']:.0f} ms); "
          f"{drawn['nodes']} nodes + {drawn['groups']} groups drawn")
    print(f"  long tasks: {len(longtasks)}; longest {worst:.0f} ms  [target: none > 200 ms]  "
          "(" + ", ".join(f"{t['duration']:.0f}" for t in longtasks) + ")")
    # expanding everything (62k boxes): laid out in slices, the page keeps responding
    wait_idle = WAIT_IDLE
    out = run({"page": str(path), "viewport": [1400, 900], "steps": [
        {"do": "ready", "quiet": True, "timeout_ms": 60000},  # nothing of the driver's runs in the page meanwhile
        {"do": "wait", "ms": 300},
        {"do": "eval", "js": "(() => { window.__mark = performance.now(); return true; })()"},
        {"do": "click", "selector": "button[title='expand all groups']", "settle_ms": 0},
        {"do": "eval", "js": wait_idle},
        {"do": "eval", "js": "window.__bench.longTasks.filter((t) => t.start >= window.__mark)"},
        {"do": "eval", "js": f"{HOOK}.panes()[0].nodes.length"},
    ]})
    took, lts, shown = out["results"][4], out["results"][5], out["results"][6]
    print(f"  expand ALL ({shown} nodes laid out): {took:.0f} ms wall, in slices; long tasks meanwhile: {len(lts)}, "
          f"longest {max([t['duration'] for t in lts] or [0]):.0f} ms")
    path, n, size = page_for(50000, True, tmp)
    out = load(path, [{"do": "wait", "ms": 500}, {"do": "eval", "js": "window.__bench.longTasks"}])
    ready, timings, _lt, drawn, nav, _w, longtasks = out["results"][:7]
    worst = max([t["duration"] for t in longtasks] or [0])
    print(f"  flat variant ({n} nodes, no module paths: consecutive-node chunks): ready {ready:.0f} ms, first paint {timings['firstPaintMs']:.0f} ms, "
          f"longest task {worst:.0f} ms")


SWITCH_GRAPH = """([run, level, graph]) => new Promise((resolve) => {
  const root = document.querySelector('#nstviz-root');
  const pane = root.querySelector('.nsv-pane');
  const pick = (label, value) => { const s = pane.querySelector(`select[aria-label=${label}]`); s.value = value; s.dispatchEvent(new Event('change')); };
  const t0 = performance.now();
  pick('run', run);
  const waitReady = (then) => { const chk = () => root.dataset.nstvizReady === '1' ? then() : requestAnimationFrame(chk); chk(); };
  waitReady(() => { pick('level', level); waitReady(() => {
    const t1 = performance.now(); pick('graph', graph);
    waitReady(() => resolve({ms: performance.now() - t1, total: performance.now() - t0, timings: root.__nstviz.timings()}));
  }); });
})"""


def scenario_real(path: Path, tmp: Path) -> None:
    from nstviz.report import Report

    report = Report.load_json(path)
    page = tmp / "real.html"
    page.write_bytes(render_html(report).encode("utf-8"))
    graphs = sorted(((len(g.nodes), run, g.level, g.id) for run, r in report.runs.items() for g in r.graphs), reverse=True)[:3]
    print(f"\n## real Report {path.name} ({page.stat().st_size / 1e6:.1f} MB page; title {report.title!r})")
    steps = [{"do": "ready", "timeout_ms": 60000}]
    for _, run_name, level, gid in graphs:
        steps.append({"do": "eval", "js": SWITCH_GRAPH, "arg": [run_name, level, gid]})
        steps.append({"do": "eval", "js": f"(() => {{ const p = {HOOK}.panes()[0]; return [p.nodes.length, p.groups.length]; }})()"})
    steps.append({"do": "eval", "js": "window.__bench.longTasks"})
    out = run({"page": str(page), "viewport": [1400, 900], "steps": steps})
    res = out["results"]
    for k, (n, run_name, _level, gid) in enumerate(graphs):
        sw, drawn = res[1 + 2 * k], res[2 + 2 * k]
        print(f"  {run_name} {gid} ({n} nodes): switch to it and first paint {sw['ms']:.0f} ms; {drawn[0]} nodes + {drawn[1]} groups drawn")
    lts = res[-1]
    print(f"  long tasks over the whole session: {len(lts)}, longest {max([t['duration'] for t in lts] or [0]):.0f} ms")
    # the largest graph: search, expand the largest collapsed group, expand everything
    _, run_name, level, gid = graphs[0]
    out = run({"page": str(page), "viewport": [1400, 900], "steps": [
        {"do": "ready", "quiet": True, "timeout_ms": 60000},  # nothing of the driver's runs in the page meanwhile
        {"do": "eval", "js": SWITCH_GRAPH, "arg": [run_name, level, gid]},
        {"do": "fill", "selector": ".nsv-search", "text": "mm"},
        {"do": "eval", "js": f"[{HOOK}.timings().lastSearchMs, {HOOK}.panes()[0].hits.length]"},
        {"do": "fill", "selector": ".nsv-search", "text": ""},
        {"do": "click", "selector": "button[title='fit to view (0)']"},
        {"do": "eval", "js": f"{HOOK}.panes()[0].groups.filter(g => !g.expanded).sort((a, b) => b.nodes - a.nodes).map(g => [g.key, g.nodes])[0]"},
    ]})
    (search_ms, hits), biggest = out["results"][3], out["results"][6]
    print(f"  {gid}: search 'mm' {search_ms:.1f} ms ({hits} hits)")
    if biggest:
        out = run({"page": str(page), "viewport": [1400, 900], "steps": [
            {"do": "ready", "quiet": True, "timeout_ms": 60000},  # nothing of the driver's runs in the page meanwhile
            {"do": "eval", "js": SWITCH_GRAPH, "arg": [run_name, level, gid]},
            {"do": "click", "selector": "button[title='fit to view (0)']"},
            {"do": "click_node", "pane": 0, "name": biggest[0]},
            {"do": "eval", "js": WAIT_IDLE},
            {"do": "eval", "js": f"{HOOK}.timings().panes[0]"},
            {"do": "eval", "js": "(() => { window.__mark = performance.now(); return true; })()"},
            {"do": "click", "selector": "button[title='expand all groups']", "settle_ms": 0},
            {"do": "eval", "js": WAIT_IDLE},
            {"do": "eval", "js": f"[{HOOK}.timings().panes[0], {HOOK}.panes()[0].nodes.length, window.__bench.longTasks.filter((t) => t.start >= window.__mark)]"},
        ]})
        t1 = out["results"][5]
        t_all, shown, lts = out["results"][9]
        print(f"  expand the largest collapsed group {biggest[0]!r} ({biggest[1]} nodes): {t1.get('lastToggleMs', float('nan')):.0f} ms "
              f"(layout {t1.get('lastLayoutMs', float('nan')):.0f} ms)  [target <= 300 ms]")
        print(f"  expand ALL ({shown} nodes): {t_all.get('lastLayoutMs', float('nan')):.0f} ms; long tasks meanwhile {len(lts)}, "
              f"longest {max([t['duration'] for t in lts] or [0]):.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", action="store_true", help="only the load scenario (bytes per node, ready, longest task)")
    ap.add_argument("--real", type=Path, action="append", default=[],
                    help="also open a real Report JSON (e.g. from make_gpt2_report.py) and time its largest graphs")
    args = ap.parse_args()
    bundle = REPO / "nstviz" / "static"
    print("# nstviz viewer benchmark (headless Debian Chromium, 1400x900, synthetic GPT-like Reports)")
    print(f"bundle: standalone.js {(bundle / 'standalone.js').stat().st_size / 1024:.1f} KiB, "
          f"viewer.js {(bundle / 'viewer.js').stat().st_size / 1024:.1f} KiB, viewer.css {(bundle / 'viewer.css').stat().st_size / 1024:.1f} KiB")
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        scenario_load(tmp)
        if args.load:
            print(f"\n(total {time.time() - t0:.0f} s)")
            return
        scenario_flat_2k(tmp)
        scenario_10k(tmp)
        if not args.quick:
            scenario_50k(tmp)
        for path in args.real:
            scenario_real(path, tmp)
    print(f"\n(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
