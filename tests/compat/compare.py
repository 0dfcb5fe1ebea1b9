#!/usr/bin/python3.11
"""Compare one suite's per-test-case results bare and enrolled.

    compare.py junit|tap|gojson SUITE OUT [--tsv FILE] [--report FILE]

junit: OUT/SUITE.bare.xml and OUT/SUITE.enrolled.xml (regrtest --junit-xml),
with .rc and .log beside them. tap: OUT/SUITE.bare/ and OUT/SUITE.enrolled/,
one FILE.tap, FILE.rc per test file of a Node suite (top-level TAP lines are
the cases, and each file's exit status is one case more). gojson:
OUT/SUITE.bare/ and OUT/SUITE.enrolled/, one PKG.json (`go test -json`
events, go tool test2json) and PKG.rc per Go package (run-go.sh): every test
and subtest is a case, named by import path and test name, and each
package's exit status is one case more.

Prints one line, PASS or FAIL (tests/lib.sh's format): PASS when every case
that passes bare passes enrolled; FAIL names each case that regresses, with
its enrolled output. Cases that fail or are skipped bare are reported, not
counted. --tsv appends one row of figures (docs/compatibility.md);
--report writes every case's two statuses and the regressions' output.
Exits 0 unless the arguments are wrong: the verdict is the printed line.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

PASS, FAIL, SKIP = "pass", "fail", "skip"


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no output)"


def panics(path, n=5):
    """A Go test binary's first lines of a panic or fatal error (a
    -test.timeout panic's first line names the tests it cut off)."""
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\n") for l in f if l.startswith(("panic: ", "fatal error: "))][:n]
    except OSError:
        return []


def read_rc(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or "-1")
    except (OSError, ValueError):
        return -1


def junit_cases(base):
    """{case: (status, detail)} from regrtest's JUnit XML; None when the
    module did not finish (no XML: a crash, or the real-time limit)."""
    try:
        root = ET.parse(base + ".xml").getroot()
    except (OSError, ET.ParseError):
        return None
    cases = {}
    for tc in root.iter("testcase"):
        name = tc.get("name")
        status, detail = PASS, ""
        for child in tc:
            if child.tag in ("failure", "error"):
                status = FAIL
                detail = (child.get("message") or "") + "\n" + (child.text or "")
                break
            if child.tag == "skipped":
                status, detail = SKIP, child.get("message") or child.text or ""
        # A subTest failure records the case twice: keep the worst.
        if name in cases and cases[name][0] == FAIL:
            continue
        cases[name] = (status, detail)
    return cases


TOP = re.compile(r"^(not ok|ok) (\d+)(?: - )?(.*?)(?: # (.*))?$")


def tap_cases(d):
    """{case: (status, detail)} from a directory of per-file TAP output."""
    if not os.path.isdir(d):
        return None
    cases = {}
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".tap"):
            continue
        stem = fn[:-4]
        path = os.path.join(d, fn)
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
        block = []
        for line in lines:
            block.append(line)
            m = TOP.match(line)
            if not m:
                continue
            ok, num, name, directive = m.groups()
            directive = (directive or "").strip()
            if re.match(r"(?i)(skip|todo)\b", directive):
                status = SKIP
            else:
                status = PASS if ok == "ok" else FAIL
            cases[f"{stem}: {num} {name}"] = (status, "\n".join(block[-40:]))
            block = []
        rc = read_rc(os.path.join(d, stem + ".rc"))
        cases[f"{stem}: exit status"] = (
            (PASS, "") if rc == 0 else (FAIL, f"exit status {rc}\n" + tail(path))
        )
    return cases


def go_cases(d):
    """{case: (status, detail)} from a directory of per-package `go test
    -json` streams. A test still running when the binary died (a panic, its
    -test.timeout) has no final event: it is missing, and the package's exit
    status case fails."""
    import json
    if not os.path.isdir(d):
        return None
    cases = {}
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".json"):
            continue
        stem = fn[:-5]
        out, pkg = {}, stem
        with open(os.path.join(d, fn), errors="replace") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                pkg = ev.get("Package") or pkg
                t, act = ev.get("Test"), ev.get("Action")
                if not t:
                    continue
                if act == "output":
                    out.setdefault(t, []).append(ev.get("Output", ""))
                elif act in ("pass", "fail", "skip"):
                    st = {"pass": PASS, "fail": FAIL, "skip": SKIP}[act]
                    cases[f"{pkg} {t}"] = (st, "".join(out.get(t, [])[-40:]))
        rc = read_rc(os.path.join(d, stem + ".rc"))
        cases[f"{pkg}: exit status"] = (
            (PASS, "") if rc == 0 else (FAIL, f"exit status {rc}\n" + tail(os.path.join(d, stem + ".out"), 40))
        )
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("junit", "tap", "gojson"))
    ap.add_argument("suite")
    ap.add_argument("out")
    ap.add_argument("--tsv")
    ap.add_argument("--report")
    a = ap.parse_args()

    base = os.path.join(a.out, a.suite)
    read = {"junit": junit_cases, "tap": tap_cases, "gojson": go_cases}[a.kind]
    bare = read(base + ".bare")
    enr = read(base + ".enrolled")
    log_e = base + ".enrolled.log"

    if not bare:
        print(f"FAIL {a.suite}: the bare run produced no results (exit {read_rc(base + '.bare.rc')}):"
              f" {tail(base + '.bare.log', 5)!r}")
        return 0
    enr_missing = enr is None
    enr = enr or {}

    passing = [c for c, (s, _) in bare.items() if s == PASS]
    not_passing = {c: s for c, (s, _) in bare.items() if s != PASS}
    regressed = []
    for c in passing:
        s, detail = enr.get(c, (None, ""))
        if s != PASS:
            regressed.append((c, s or "missing", detail))
    pass_enr = sum(1 for s, _ in enr.values() if s == PASS)
    n_fail_bare = sum(1 for s in not_passing.values() if s == FAIL)
    n_skip_bare = sum(1 for s in not_passing.values() if s == SKIP)

    if a.report:
        with open(a.report, "w") as f:
            f.write(f"# {a.suite}: case, bare, enrolled\n")
            for c in sorted(set(bare) | set(enr)):
                f.write(f"{c}\t{bare.get(c, ('-',))[0]}\t{enr.get(c, ('-',))[0]}\n")
            for c, s, detail in regressed:
                f.write(f"\n## REGRESSION {c} ({s})\n{detail}\n")
    if a.tsv:
        sec = lambda m: open(base + f".{m}.sec").read().strip() if os.path.exists(base + f".{m}.sec") else "-"
        with open(a.tsv, "a") as f:
            f.write("\t".join(map(str, (a.suite, len(bare), len(passing), pass_enr, len(regressed),
                                        n_fail_bare, n_skip_bare, sec("bare"), sec("enrolled")))) + "\n")

    reported = f"{n_fail_bare} fail and {n_skip_bare} skipped bare, reported, not counted"
    if not_passing and n_fail_bare:
        reported += ": failing bare: " + ", ".join(sorted(c for c, s in not_passing.items() if s == FAIL)[:10])
    if regressed:
        print(f"FAIL {a.suite}: {len(regressed)} of {len(passing)} cases that pass bare do not pass enrolled:")
        missing = [c for c, s, _ in regressed if s == "missing"]
        for c, s, detail in regressed:
            if s == "missing":
                continue
            print(f"  {c}: {s}")
            for line in detail.strip().splitlines()[-25:]:
                print(f"    | {line}")
        if missing:
            print(f"  {len(missing)} with no enrolled result"
                  + (" (the enrolled run produced none)" if enr_missing else "")
                  + f": {', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}")
            print(f"  the enrolled run exited {read_rc(base + '.enrolled.rc')}; the end of its log:")
            for line in tail(log_e).strip().splitlines():
                print(f"    | {line}")
            # (a Go package's own output says why: a -test.timeout panic
            # names the tests it cut off, a crash its signal)
            if a.kind == "gojson":
                for pkg in sorted({c.split(" ", 1)[0] for c in missing}):
                    stem = os.path.join(base + ".enrolled", pkg.replace("/", "_"))
                    print(f"  the end of {pkg}'s output (exit {read_rc(stem + '.rc')}):")
                    for line in panics(stem + ".out") + tail(stem + ".out", 20).strip().splitlines():
                        print(f"    | {line}")
        print(f"  ({reported})")
    else:
        print(f"PASS {a.suite}: all {len(passing)} cases that pass bare pass enrolled ({reported})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
