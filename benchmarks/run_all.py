"""Every benchmark of the project in one run, the machine described, the README's figures.

    .venv/bin/foosball bench [--json [FILE]] [--markdown] [--quick] [--rig] [--only NAME ...]
    .venv/bin/foosball bench --from FILE --markdown        # the table again from a saved run

Each benchmark runs as its own process, one after the other (so none slows another), with
the arguments below: together about 3 minutes on the 2-core development VM (`--quick`: half
a minute, for trying it). Those that need root (network namespaces, SCHED_FIFO) are skipped
with the reason elsewhere; the rig's match (`rig_match.py`) runs only with `--rig`, because
it brings the whole simulated rig up. Every figure is the benchmark's own, side by side
with its reference in the same run where it has one (the ratio column); nothing is
recomputed here but the ratios of two figures of one run.

`--markdown` prints the README's "Measured figures" table made from the run: the README
keeps it between the markers `<!-- bench:begin -->` and `<!-- bench:end -->`, and
`--update-readme` writes it there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
README = REPO / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

Figures = list[tuple[str, str, str, str]]  # what, figure, ratio, note


@dataclass(frozen=True)
class Bench:
    name: str
    command: Callable[[bool, Path], list[str]]  # (quick, a temporary JSON path) -> argv
    figures: Callable[[Any], Figures]
    root: bool = False  # needs root (namespaces, SCHED_FIFO)
    opt_in: str = ""  # the flag that asks for it (the rig's match)
    json_file: bool = False  # writes its JSON to the temporary path instead of stdout
    timeout_s: float = 300.0


def _script(name: str, *args: str) -> list[str]:
    return [sys.executable, str(HERE / name), *args]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "foosball.cli", *args]


def _pick(quick: bool, full: str, short: str) -> str:
    return short if quick else full


# -- what each benchmark's JSON says, as rows of the table -----------------------------------
def _tracker(r: dict[str, Any]) -> Figures:
    ours, seed = r["ours_tracking"], r["seed_style_full_frame"]
    return [("ball tracker while tracking, 640x480, against the seed-style full-frame "
             "pipeline in the same run",
             f"median {ours['median_us']:.0f} us per frame (seed-style "
             f"{seed['median_us']:.0f} us)",
             f"{r['speedup_tracking_median']:.1f}x", "issue 4, issue 15")]


def _wire(r: dict[str, Any]) -> Figures:
    codec = r["codec"]
    rows = [("wire: encode + MAC + decode, against the bare cbor2 round trip + HMAC of the "
             "same payload",
             ", ".join(f"{name} {c['encode_mac_decode_us']:.0f} us" for name, c in
                       codec.items()),
             ", ".join(f"{name} {c['ratio_to_bare']:.2f}x" for name, c in codec.items()),
             "issue 19")]
    latency = r.get("raw_ethernet_one_way")
    if latency:
        rows.append(("wire: one-way raw Ethernet between two namespaces",
                     f"p50 {latency['p50_us']:.0f} us, p99 {latency['p99_us']:.0f} us "
                     f"({latency['messages']} messages)", "", "issue 2"))
    return rows


def _ethercat(runs: list[dict[str, Any]]) -> Figures:
    rows = []
    for r in runs:
        late = r.get("wakeup_lateness_us", {})
        stops = [case.get("cycles_to_quick_stop_all_axes")
                 for case in r.get("fault_to_quick_stop", {}).values()]
        stop = max(stops) if stops and None not in stops else None
        rows.append((f"EtherCAT {r['cycle_ms']:g} ms cycle, SCHED_FIFO, real pysoem vs the "
                     "emulator",
                     f"wake-up lateness p50 {late.get('p50', float('nan')):.0f} us, p99 "
                     f"{late.get('p99', float('nan')):.0f} us; {r.get('bad_working_counters')} "
                     f"bad working counters in {r.get('cycles')} cycles"
                     + (f"; injected drive faults ({len(stops)}) -> quick stop on all axes "
                        f"within {stop} cycles" if stop is not None else ""), "", "issue 5"))
    return rows


def _strategy(r: dict[str, Any]) -> Figures:
    ours, seed = r["improved"]["cpu_median_of_passes"], r["seed-rules"]["cpu_median_of_passes"]
    return [("`improved` strategy step (agent core, replayed ball states)",
             f"median {ours['median_us']:.0f} us, p99 {ours['p99_us']:.0f} us (seed rules "
             f"{seed['median_us']:.0f} / {seed['p99_us']:.0f} us, same run)",
             f"{ours['median_us'] / seed['median_us']:.2f}x the seed rules", "issue 13")]


def _sim(r: dict[str, Any]) -> Figures:
    load = r["physics_match_load"]
    return [("simulator: headless physics",
             f"{load['physics_x_real_time_cpu']:.0f}x real time on one core (stress "
             f"{r['physics_stress']['x_real_time_cpu']:.0f}x)", "", "issue 3"),
            ("simulator: camera renderer 640x480",
             f"{r['renderer']['fps_cpu']:.0f} frames/s (CPU time)", "", "issue 3")]


def _match(r: dict[str, Any]) -> Figures:
    rows = r["matches"]
    best = {row["robot"]: row["x_real_time_cpu_best"] for row in rows}
    median = {row["robot"]: row["x_real_time_cpu_median"] for row in rows}
    first = rows[0]
    return [(f"whole {first['seconds']:g} s match, one core (best of {first['rounds']} rounds "
             "taking turns)",
             ", ".join(f"`{robot}` vs `{first['opponent']}` {x:.0f}x real time (median "
                       f"{median[robot]:.0f}x)" for robot, x in best.items()),
             f"improved {best['improved'] / best['hold']:.2f}x the speed of hold"
             if {"hold", "improved"} <= set(best) else "", "issue 13")]


def _budget(r: dict[str, Any]) -> Figures:
    return [(f"performance budget: {a['agent']} on the {a['board']} board "
             f"({a['cpu']}, x{a['factor']})",
             f"{a['share_pct']:.0f} % of one core per {a['period_ms']:g} ms {a['per']}"
             + (f" ({a['share_1ms_pct']:.0f} % at a 1 ms cycle; its per-cycle kernel in "
                f"its own real-time process {a['kernel_1ms_pct']:.0f} % at 1 ms)"
                if "kernel_1ms_pct" in a else ""),
             f"{a['share_pct'] / r['budget_pct']:.2f}x the {r['budget_pct']:g} % budget",
             "issue 19") for a in r["agents"]]


def _recorder(r: dict[str, Any]) -> Figures:
    return [("match recorder on the strategy board (the rig's traffic at "
             f"{r['fps']:g} fps)",
             f"{r['board_share_pct']:.0f} % of one core (x{r['board_factor']}), "
             f"{r['mib_per_5_min']:.0f} MiB per 5 minutes; a step waits p99 "
             f"{r['act_us']['p99']:.0f} us for the file",
             f"{r['ratio_to_listening']:.2f}x only listening", "issue 18")]


def _rig(r: dict[str, Any]) -> Figures:
    rig = r["rig"]
    c2r = rig["capture_to_rod_command_ms"]
    setpoint = rig.get("capture_to_setpoint_ms_per_window", {})
    on_ethercat = ""
    if setpoint.get("p50_median") is not None:
        on_ethercat = (f"; capture -> setpoint in the EtherCAT frame p50 "
                       f"{setpoint['p50_median']:.1f} ms, p99 {setpoint['p99_median']:.1f} ms "
                       f"(medians of {setpoint['windows']} motor driver windows)")
    return [(f"the whole rig, {r['seconds']:g} s match at {r['fps']:g} fps asked",
             f"capture -> RodCommand p50 {c2r.get('p50', float('nan')):.1f} ms, p99 "
             f"{c2r.get('p99', float('nan')):.1f} ms{on_ethercat}; "
             f"{rig['ball_states_per_s']:.0f} ball states/s", "", "issue 12")]


BENCHES: tuple[Bench, ...] = (
    Bench("tracker", lambda q, _: _cli("vision", "bench", "--frames", _pick(q, "600", "100"),
                                       "--repeats", _pick(q, "3", "1"), "--json"), _tracker),
    Bench("wire", lambda q, _: _script("wire_bench.py", "--latency", "--count",
                                       _pick(q, "5000", "1000")), _wire, root=True),
    Bench("wire_codec", lambda q, _: _script("wire_bench.py"), _wire),  # without root
    Bench("ethercat", lambda q, p: _script("ethercat_cycle.py", "--seconds",
                                           _pick(q, "30", "5"), "--cycle-ms", "5", "1",
                                           "--json", str(p)),
          _ethercat, root=True, json_file=True),
    Bench("strategy", lambda q, _: _script("strategy_step.py", "--seconds",
                                           _pick(q, "60", "10"), "--passes",
                                           _pick(q, "5", "1"), "--json"), _strategy),
    Bench("sim", lambda q, _: _script("sim_speed.py", "--seconds", _pick(q, "60", "5"),
                                      "--frames", _pick(q, "2000", "200"), "--json"), _sim),
    Bench("match", lambda q, _: _script("match_speed.py", "--seconds", _pick(q, "600", "30"),
                                        "--json"), _match),
    Bench("budget", lambda q, p: _script("budget.py", "--runs", _pick(q, "5", "1"),
                                         "--json", str(p)),
          _budget, json_file=True, timeout_s=600.0),
    Bench("recorder", lambda q, _: _script("recorder_cost.py", "--seconds",
                                           _pick(q, "5", "1"), "--runs", _pick(q, "3", "1"),
                                           "--json"), _recorder),
    Bench("rig", lambda q, _: _script("rig_match.py", "--seconds", _pick(q, "60", "20")),
          _rig, root=True, opt_in="--rig", timeout_s=400.0),
)


# -- the machine ------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0].split()
        memory = f"{int(first[1]) / 2**20:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(), "memory": memory,
            "kernel": platform.release(), "python": platform.python_version(),
            "machine": platform.machine(), "root": os.geteuid() == 0,
            "loadavg_before": _loadavg()}


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


# -- running ------------------------------------------------------------------------------------
@dataclass
class Outcome:
    name: str
    status: str  # ok | skipped | failed
    seconds: float = 0.0
    reason: str = ""
    result: Any = None
    figures: Figures = field(default_factory=list)


def run_one(bench: Bench, quick: bool, asked: set[str]) -> Outcome:
    is_root = os.geteuid() == 0
    if bench.opt_in and bench.opt_in not in asked:
        return Outcome(bench.name, "skipped", reason=f"only with {bench.opt_in}")
    if bench.root and not is_root:
        return Outcome(bench.name, "skipped", reason="needs root (namespaces, SCHED_FIFO)")
    if bench.name == "wire_codec" and is_root:
        return Outcome(bench.name, "skipped", reason="'wire' measures the codec too")
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        path = Path(tmp) / "out.json"
        argv = bench.command(quick, path)
        start = time.monotonic()
        env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + str(REPO))
        try:
            done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env,
                                  timeout=bench.timeout_s)
        except subprocess.TimeoutExpired:
            return Outcome(bench.name, "failed", bench.timeout_s,
                           f"no result in {bench.timeout_s:g} s")
        seconds = time.monotonic() - start
        if done.returncode not in (0, 1):  # budget.py exits 1 naming agents over budget
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return Outcome(bench.name, "failed", seconds,
                           f"exit {done.returncode}: {' | '.join(tail)}")
        try:
            result = json.loads(path.read_text() if bench.json_file else
                                _last_json(done.stdout))
            figures = bench.figures(result)
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
            return Outcome(bench.name, "failed", seconds,
                           f"unreadable result ({type(exc).__name__}: {exc})")
    return Outcome(bench.name, "ok", seconds, result=result, figures=figures)


def _last_json(text: str) -> str:
    """The JSON document a benchmark printed last (some print a line of text first)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("{", "[")):
            try:
                json.loads("\n".join(lines[i:]))
            except ValueError:
                continue
            return "\n".join(lines[i:])
    raise ValueError("no JSON in its output")


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        BEGIN,
        f"Generated by `foosball bench` ({report['date']}, {report['seconds']:.0f} s) on "
        f"{m['cpu']}, {m['cores']} cores, {m['memory']}, Linux {m['kernel']}, Python "
        f"{m['python']}; load average {m['loadavg_before']} before, "
        f"{report['loadavg_after']} after. Ratios are of two figures of the same run.",
        "",
        "| what | figure | ratio | note |",
        "|---|---|---|---|",
    ]
    for outcome in report["benchmarks"]:
        for what, figure, ratio, note in outcome["figures"]:
            links = ", ".join(
                f"[{n.strip()}](docs/notes/issue-{n.strip().split()[-1]}.md)"
                for n in note.split(","))
            lines.append(f"| {what} | {figure} | {ratio} | {links} |")
    skipped = [f"{o['name']} ({o['reason']})" for o in report["benchmarks"]
               if o["status"] != "ok" and o["name"] != "wire_codec"]
    if skipped:
        lines += ["", "Not in this run: " + "; ".join(skipped) + "."]
    lines.append(END)
    return "\n".join(lines)


def update_readme(text: str, table: str) -> str:
    if BEGIN not in text or END not in text:
        raise ValueError(f"{README}: no {BEGIN} ... {END} section")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return before + table + after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="foosball bench", description=__doc__.splitlines()[0])
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="the whole run as JSON, to FILE or (without one) to stdout")
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    parser.add_argument("--update-readme", action="store_true",
                        help="write the table into README.md between its markers")
    parser.add_argument("--quick", action="store_true", help="short runs, to try it")
    parser.add_argument("--rig", action="store_true", help="also a match on the whole rig")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        choices=[b.name for b in BENCHES])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="no run: the table from a saved --json run")
    args = parser.parse_args(argv)
    if args.source is not None:
        report = json.loads(args.source.read_text())
        by_name = {b.name: b for b in BENCHES}
        for outcome in report["benchmarks"]:  # again from the results: the parsers as now
            if outcome["status"] == "ok":
                outcome["figures"] = by_name[outcome["name"]].figures(outcome["result"])
    else:
        report = run(args)
        if args.json == "-":
            print(json.dumps(report, indent=1))
        elif args.json is not None:
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    table = markdown(report)
    if args.markdown:
        print(table)
    if args.update_readme:
        README.write_text(update_readme(README.read_text(), table))
        print(f"{README}: figures table written", file=sys.stderr)
    return 0 if all(o["status"] != "failed" for o in report["benchmarks"]) else 1


def run(args: argparse.Namespace) -> dict[str, Any]:
    asked = {"--rig"} if args.rig else set()
    start = time.monotonic()
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                              "quick": args.quick, "machine": machine(), "benchmarks": []}
    print(f"machine: {json.dumps(report['machine'])}", file=sys.stderr)
    for bench in BENCHES:
        if args.only and bench.name not in args.only:
            continue
        outcome = run_one(bench, args.quick, asked)
        line = f"{bench.name}: {outcome.status} in {outcome.seconds:.0f} s"
        print(line + (f" ({outcome.reason})" if outcome.reason else ""), file=sys.stderr)
        for what, figure, ratio, _ in outcome.figures:
            print(f"  {what}: {figure}" + (f" [{ratio}]" if ratio else ""), file=sys.stderr)
        report["benchmarks"].append({"name": outcome.name, "status": outcome.status,
                                     "seconds": round(outcome.seconds, 1),
                                     "reason": outcome.reason, "figures": outcome.figures,
                                     "result": outcome.result})
    report["seconds"] = time.monotonic() - start
    report["loadavg_after"] = _loadavg()
    return report


if __name__ == "__main__":
    sys.exit(main())
