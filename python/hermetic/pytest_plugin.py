"""pytest plugin: every test that asks for it runs in a hermetic scope of its
own (README, section "pytest"). Loaded through the pytest11 entry point once
the package is installed; it does nothing until one of its options, its
marker or its fixture is used - except that, enrolled, pytest's own report
(durations, JUnit times, "in N s") is timed on the real clock (_real_timing).

How it runs: a scope is a feature of hermetic's shim, so pytest must run
enrolled. Given one of the --hermetic-* options, a pytest that is not
enrolled re-executes itself (same interpreter, same arguments) as
'hermetic enroll [--seed B] [--now T] [--record=DIR --journal-per-scope] --
python -m pytest ...', or as 'hermetic replay FILE --scope NODEID -- ...' for
--hermetic-replay (the journal's configuration wins). Started as 'hermetic enroll -- pytest ...' it uses that
run. Each test's scope is named by its node id; its seed is derived from
the base seed (--hermetic-seed, else the run's) and the node id, unless the
marker gives seed=.
"""
import os
import shlex
import json
import shutil
import subprocess
import sys

import pytest

import hermetic

MARK = "hermetic"
NOT_ENROLLED = "not enrolled"
FIXTURE = "hermetic_sandbox"
REEXEC = "HERMETIC_PYTEST_REEXEC"
REPLAY_SEED = "HERMETIC_PYTEST_REPLAY_SEED"
REPLAY_NOW = "HERMETIC_PYTEST_REPLAY_NOW"


def pytest_addoption(parser):
    g = parser.getgroup("hermetic", "hermetic: per-test clock and entropy scopes")
    g.addoption("--hermetic-all", action="store_true", default=False,
                help="run every test in a hermetic scope (except @pytest.mark.hermetic(off=True))")
    g.addoption("--hermetic-seed", metavar="BASE", type=int, default=None,
                help="base seed: each test's seed is derived from BASE and its node id")
    g.addoption("--hermetic-now", metavar="TIME", default=None,
                help="where every test's clock starts (ISO 8601 or @epoch; default: hermetic's --now)")
    g.addoption("--hermetic-record", metavar="DIR", default=None,
                help="keep a journal of every failing test in DIR (DIR/index.json names them)")
    g.addoption("--hermetic-replay", metavar="FILE", default=None,
                help="run the test a journal recorded, on the values it recorded")
    g.addoption("--hermetic-hunt", metavar="N", type=int, default=None,
                help="hunt flaky tests: run each selected test N times in one process, each in a "
                     "scope of its own seed (base seeds 1..N, or BASE..BASE+N-1 with "
                     "--hermetic-seed), and print the reproduction of a failing one")
    g.addoption("--hermetic-yes", action="store_true", default=False,
                help="with --hermetic-replay: replay a journal you did not record without asking "
                     "(hermetic replay --yes)")


def _used(config):
    o = config.option
    return bool(o.hermetic_all or o.hermetic_seed is not None or o.hermetic_record or
                o.hermetic_replay or o.hermetic_now or o.hermetic_hunt is not None)


def _hermetic_bin():
    b = os.environ.get("HERMETIC_BIN") or shutil.which("hermetic")
    if not b:
        raise pytest.UsageError(
            "hermetic: the 'hermetic' command is not on PATH; install hermetic, or run "
            "'hermetic enroll -- %s'" % _cmdline())
    return b


def _cmdline():
    return " ".join(shlex.quote(a) for a in ["pytest"] + sys.argv[1:])


# Options whose value is a path. pytest picks its rootdir (and with it every
# node id, so every test's seed) before it knows a plugin's options: in
# '--hermetic-record /abs/dir' it takes /abs/dir for a test path. Written
# '--hermetic-record=/abs/dir' it is an option to it, as meant.
_PATH_OPTS = ("--hermetic-record", "--hermetic-replay")
JOINED = "HERMETIC_PYTEST_JOINED"


def _joined(args):
    """args with '--opt V' of _PATH_OPTS written '--opt=V'."""
    out, i = [], 0
    while i < len(args):
        if args[i] in _PATH_OPTS and i + 1 < len(args):
            out.append(args[i] + "=" + args[i + 1])
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


def _strip(args, opt):
    """args without opt and its value (as '--opt V' or '--opt=V')."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == opt:
            skip = True
        elif not a.startswith(opt + "="):
            out.append(a)
    return out


def _journal_scopes(hbin, path):
    try:
        r = subprocess.run([hbin, "journals", "show", path, "--json"], capture_output=True,
                           text=True, check=False)
    except OSError as e:
        raise pytest.UsageError("hermetic: cannot run %s: %s" % (hbin, e))
    if r.returncode != 0:
        raise pytest.UsageError("hermetic: cannot read journal %s: %s" % (path, r.stderr.strip()))
    return json.loads(r.stdout).get("scopes", [])


def _reexec(config):
    o = config.option
    args = list(config.invocation_params.args)
    if args != sys.argv[1:]:
        raise pytest.UsageError(
            "hermetic: this pytest is not enrolled in a hermetic run and was not started from a "
            "command line it can repeat; run it as 'hermetic enroll -- pytest ...'")
    if os.environ.get(REEXEC):
        raise pytest.UsageError("hermetic: re-executed under hermetic but still not enrolled "
                                "(is the shim installed where hermetic expects it?)")
    args = _joined(args)
    hbin = _hermetic_bin()
    py = [sys.executable, "-m", "pytest"]
    if o.hermetic_hunt is not None and o.hermetic_hunt < 1:
        raise pytest.UsageError("hermetic: --hermetic-hunt %d: a hunt needs at least one run"
                                % o.hermetic_hunt)
    if o.hermetic_replay:
        scopes = _journal_scopes(hbin, o.hermetic_replay)
        if not scopes:
            raise pytest.UsageError("hermetic: journal %s holds no test (no scope); replay a whole "
                                    "run with 'hermetic replay %s'" % (o.hermetic_replay, o.hermetic_replay))
        scopes = [s for s in scopes if s.get("kind") == "scope"]
        failed = [s for s in scopes if s.get("status") == "failed"] or scopes
        node = failed[0]["name"]
        # the recorded test's own seed and start, whatever the options say now
        os.environ[REPLAY_SEED] = str(failed[0]["seed"])
        os.environ[REPLAY_NOW] = failed[0]["now"]
        rest = [a for a in _strip(args, "--hermetic-replay") if a != "--hermetic-yes"]
        yes = ["--yes"] if o.hermetic_yes else []
        cmd = [hbin, "replay", o.hermetic_replay, "--scope", node] + yes + ["--"] + py + rest + [node]
    else:
        cmd = [hbin, "enroll"]
        if o.hermetic_seed is not None:
            cmd.append("--seed=%d" % o.hermetic_seed)
        if o.hermetic_now:
            cmd.append("--now=%s" % o.hermetic_now)
        if o.hermetic_record:
            cmd += ["--record=%s" % o.hermetic_record, "--journal-per-scope"]
        cmd += ["--"] + py + args
    sys.stderr.write("hermetic: re-running under hermetic: %s\n" % " ".join(shlex.quote(c) for c in cmd))
    sys.stderr.flush()
    os.environ[REEXEC] = "1"
    try:
        os.execv(cmd[0], cmd)
    except OSError as e:
        raise pytest.UsageError("hermetic: cannot run %s: %s" % (cmd[0], e))


def _rejoin(config):
    """Enrolled, started with '--hermetic-record DIR' (space form): pytest took
    DIR for a test path and chose its rootdir by it. Start again, in the same
    run, with the '=' form, so that node ids (and seeds) are the ones CI and
    the printed repro lines use."""
    args = list(config.invocation_params.args)
    if args != sys.argv[1:] or _joined(args) == args or os.environ.get(JOINED):
        return
    os.environ[JOINED] = "1"
    cmd = [sys.executable, "-m", "pytest"] + _joined(args)
    sys.stderr.write("hermetic: re-running with the path options joined to their values (pytest "
                     "would take them for test paths): %s\n" % " ".join(shlex.quote(c) for c in cmd))
    sys.stderr.flush()
    try:
        os.execv(cmd[0], cmd)
    except OSError as e:
        raise pytest.UsageError("hermetic: cannot run %s: %s" % (cmd[0], e))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if not _used(config) or hermetic.current() is not None:
        replaying = bool(os.environ.get("HERMETIC_REPLAY"))
        if hermetic.current() is not None and config.option.hermetic_replay:
            raise pytest.UsageError(
                "hermetic: --hermetic-replay starts 'hermetic replay' itself: run "
                "'pytest --hermetic-replay FILE' outside 'hermetic enroll'")
        if hermetic.current() is not None and config.option.hermetic_record and replaying:
            # 'hermetic replay JOURNAL --scope NODEID' runs the recorded
            # command, --hermetic-record included: a replay records nothing.
            sys.stderr.write("hermetic: replaying: --hermetic-record is ignored (a replay keeps "
                             "no journal)\n")
        elif hermetic.current() is not None and config.option.hermetic_record and \
                not os.environ.get("HERMETIC_RECORD"):
            raise pytest.UsageError(
                "hermetic: --hermetic-record needs a recorded run: run 'pytest --hermetic-record DIR' "
                "outside 'hermetic enroll' (it enrolls itself), or 'hermetic enroll --record=DIR "
                "--journal-per-scope -- pytest ...'")
        # (not under replay: the recorded run's node ids are what it replays)
        if hermetic.current() is not None and _used(config) and not replaying and \
                not hasattr(config, "workerinput"):
            _rejoin(config)
        return None
    if hasattr(config, "workerinput"):
        return None  # an xdist worker: its master is enrolled, so is it
    _reexec(config)
    return None


class _State:
    def __init__(self, config):
        self.config = config
        o = config.option
        h = hermetic.current()
        self.handle = h
        self.base = o.hermetic_seed if o.hermetic_seed is not None else (h.base_seed if h else None)
        self.now = o.hermetic_now
        self.replay_node = os.environ.get("HERMETIC_REPLAY_SCOPE")
        self.failures = []  # (nodeid, seed)
        self.hunted = []  # --hermetic-hunt: (nodeid, failed, runs, repro line)

    def spec(self, item):
        """(seed, now) for a test that runs in a scope, else None."""
        m = item.get_closest_marker(MARK)
        kw = dict(m.kwargs) if m else {}
        if kw.get("off"):
            return None
        if not (m or self.config.option.hermetic_all or FIXTURE in getattr(item, "fixturenames", ())
                or self.replay_node == item.nodeid or self.config.option.hermetic_hunt):
            return None
        unknown = set(kw) - {"seed", "now", "off"}
        if unknown:
            raise pytest.UsageError("@pytest.mark.hermetic: unknown argument%s %s (seed=, now=, off=)"
                                    % ("s" if len(unknown) > 1 else "", ", ".join(sorted(unknown))))
        if self.handle is None:
            # This test fails (in its setup), not the session: the others run.
            return NOT_ENROLLED
        seed = kw.get("seed")
        if item.nodeid == self.replay_node and os.environ.get(REPLAY_SEED):
            return int(os.environ[REPLAY_SEED]), os.environ.get(REPLAY_NOW), True
        if seed is None:
            seed = self.handle.scope_seed(item.nodeid, base=self.base)
        return int(seed), kw.get("now", self.now), "seed" in kw

    def repro(self, item, seed, fixed, base=None):
        args = ["pytest"]
        if self.config.option.hermetic_all or base is not None:
            args.append("--hermetic-all")
        base = self.base if base is None else base
        if base is not None:
            args.append("--hermetic-seed=%d" % base)
        now = self.now or _iso(os.environ.get("HERMETIC_NOW", ""))
        if now:
            args.append("--hermetic-now=%s" % now)
        args.append(item.nodeid)
        line = " ".join(shlex.quote(a) for a in args)
        extra = " (the test's own seed=%d)" % seed if fixed else " (its seed %d)" % seed
        return line, extra


def pytest_configure(config):
    _real_timing()
    config.addinivalue_line(
        "markers", "hermetic(seed=None, now=None, off=False): run this test in a hermetic scope "
        "(clock from --now, entropy from (seed, node id)); off=True exempts it from --hermetic-all")
    config._hermetic = _State(config)
    if config.option.hermetic_hunt:
        config.pluginmanager.register(_Hunt(), "hermetic-hunt")


# ---- real durations ------------------------------------------------------------
# pytest's own report (test durations, --durations, JUnit time= and timestamp,
# the "in N s" line) reads the clock through _pytest.timing; enrolled, that
# clock is the run's virtual one, which does not move while a test computes
# ("736 passed in 0.73s" for 10.8 s). People read these numbers to find slow
# tests, so they get the real clock, read through the shim's escape
# (hermetic_shim_real_clock_gettime: it reads, it cannot move the run's
# clock, and it is not a reading of the run's clock). The tests' clocks stay
# virtual: time.time() in a test is the run's.

def _real_timing():
    """Point _pytest.timing's clocks at the real ones when pytest runs
    enrolled; True when it did."""
    h = hermetic.current()
    if h is None:
        return False
    try:
        from _pytest import timing
    except ImportError:  # a pytest without the module: its report stays virtual
        return False
    if getattr(timing, "_hermetic_real", False):
        return True
    timing.time = h.real.time
    timing.perf_counter = h.real.monotonic
    timing._hermetic_real = True
    return True


def _iso(ns):
    """HERMETIC_NOW (ns since the epoch) as ISO 8601, or ''."""
    if not ns.lstrip("-").isdigit():
        return ""
    t = hermetic._EPOCH + hermetic._dt.timedelta(microseconds=int(ns) // 1000)
    return t.isoformat().replace("+00:00", "Z")


def pytest_report_header(config):
    st = getattr(config, "_hermetic", None)
    if st is None or st.handle is None:
        if st is not None and _used(config):
            return ["hermetic: not enrolled"]
        return None
    h = st.handle
    now = st.now or _iso(os.environ.get("HERMETIC_NOW", ""))
    return ["hermetic: base seed %d (each test's seed from it and the node id), every test's "
            "clock from %s, network %s; repeat with --hermetic-seed=%d"
            % (st.base, now or "--now", h.network, st.base)]


def pytest_collection_modifyitems(session, config, items):
    st = config._hermetic
    if not st.replay_node:
        return
    # (the first: its file may be on the command line besides its node id)
    keep = [i for i in items if i.nodeid == st.replay_node][:1]
    if not keep:
        raise pytest.UsageError("hermetic: the journal's test %s was not collected" % st.replay_node)
    config.hook.pytest_deselected(items=[i for i in items if i is not keep[0]])
    items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    st = item.config._hermetic
    if _hunting(item):
        yield  # pytest_runtest_protocol below runs each seed in its own scope
        return
    spec = st.spec(item)
    if spec is NOT_ENROLLED:
        item._hermetic_unenrolled = True
        spec = None
    if spec is None:
        yield
        return
    seed, now, fixed = spec
    info = item._hermetic = {"seed": seed, "now": now, "fixed": fixed,
                             "status": hermetic.SCOPE_PASSED, "ran": False}
    info["token"] = hermetic.enter_scope(item.nodeid, seed=seed, now=now)
    try:
        yield
    finally:
        hermetic.leave_scope(info["token"], info["status"])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if getattr(item, "_hermetic_unenrolled", False):
        pytest.fail("hermetic: %s asks for a hermetic scope but pytest is not enrolled; run "
                    "'pytest --hermetic-all ...' (it enrolls itself) or 'hermetic enroll -- "
                    "pytest ...'" % item.nodeid, pytrace=False)
    # A rerun plugin (pytest-rerunfailures) runs setup, call and teardown
    # again inside one protocol: each attempt gets a scope of its own, left
    # with its own status, so a failing attempt keeps its journal.
    info = getattr(item, "_hermetic", None)
    if info is not None and info["ran"]:
        hermetic.leave_scope(info["token"], info["status"])
        info["status"] = hermetic.SCOPE_PASSED
        info["token"] = hermetic.enter_scope(item.nodeid, seed=info["seed"], now=info["now"])
    if info is not None:
        info["ran"] = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    info = getattr(item, "_hermetic", None)
    if info is None:
        return
    if rep.failed:
        info["status"] = hermetic.SCOPE_FAILED
        if item.config._hermetic.replay_node:
            return  # replaying: hermetic replay says how to replay again
        line, extra = item.config._hermetic.repro(item, info["seed"], info["fixed"],
                                                  info.get("base"))
        text = "reproduce%s:\n  %s\n" % (extra, line)
        if os.environ.get("HERMETIC_RECORD"):
            text += "its journal is kept with the run's (the journal directory's index.json)\n"
        rep.sections.append(("hermetic", text))
        rep.user_properties.append(("hermetic_repro", line))
    elif rep.skipped and info["status"] == hermetic.SCOPE_PASSED and call.when != "teardown":
        info["status"] = hermetic.SCOPE_SKIPPED


# ---- --hermetic-hunt N ---------------------------------------------------------
# Each selected test runs N times in this process, the k-th time in a scope
# whose seed derives from base seed k (1..N, or BASE+k-1 with
# --hermetic-seed) and its node id: exactly the scope 'pytest
# --hermetic-all --hermetic-seed=k NODEID' gives it, which is the
# reproduction printed. The clock starts at --hermetic-now (or the run's)
# each time: a test hunt varies the entropy axis. pytest sees one result per
# test: the first failing run's, else the last run's.

def _hunting(item):
    st = item.config._hermetic
    return bool(item.config.option.hermetic_hunt) and st.handle is not None and \
        not st.replay_node and st.spec(item) not in (None, NOT_ENROLLED)


class _Hunt:
    """Registered as a plugin of its own (pytest_configure): the module's
    pytest_runtest_protocol is the scope's hookwrapper."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        return _hunt_protocol(item, nextitem)


def _hunt_protocol(item, nextitem):
    if not _hunting(item):
        return None
    from _pytest.runner import runtestprotocol
    st = item.config._hermetic
    n = item.config.option.hermetic_hunt
    first = st.base if item.config.option.hermetic_seed is not None else 1
    kept, failed, failing_base = None, 0, None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for k in range(n):
        base = first + k
        seed = st.handle.scope_seed(item.nodeid, base=base)
        info = item._hermetic = {"seed": seed, "now": st.now, "fixed": False, "base": base,
                                 "status": hermetic.SCOPE_PASSED, "ran": False}
        info["token"] = hermetic.enter_scope(item.nodeid, seed=seed, now=st.now)
        try:
            if k:
                item._initrequest()  # fresh function-scoped fixtures
            reports = runtestprotocol(item, nextitem=nextitem if k == n - 1 else item, log=False)
        finally:
            hermetic.leave_scope(info["token"], info["status"])
        if any(r.failed for r in reports):
            failed += 1
            if failing_base is None:
                failing_base, kept = base, reports
        elif failing_base is None:
            kept = reports
    if failing_base is not None:
        line, _ = st.repro(item, 0, False, failing_base)
        st.hunted.append((item.nodeid, failed, n, line))
        for r in kept:
            if r.failed:
                r.sections.append(("hermetic hunt", "failed with %d of %d seeds\n" % (failed, n)))
    else:
        st.hunted.append((item.nodeid, 0, n, None))
    for r in kept:
        item.ihook.pytest_runtest_logreport(report=r)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    st = getattr(config, "_hermetic", None)
    if st is not None and st.hunted:
        bad = [h for h in st.hunted if h[1]]
        terminalreporter.write_sep("-", "hermetic hunt: %d of %d tests failed under some seed "
                                   "(%d seeds each)" % (len(bad), len(st.hunted),
                                                         config.option.hermetic_hunt))
        for nodeid, k, n, line in bad:
            terminalreporter.write_line("%s: failed with %d of %d seeds; reproduce: %s"
                                        % (nodeid, k, n, line))
    lines = []
    for rep in terminalreporter.stats.get("failed", []) + terminalreporter.stats.get("error", []):
        for k, v in getattr(rep, "user_properties", ()):
            if k == "hermetic_repro" and v not in lines:
                lines.append(v)
    if lines:
        terminalreporter.write_sep("-", "hermetic: reproduce a failing test")
        for l in lines:
            terminalreporter.write_line(l)


@pytest.fixture
def hermetic_sandbox(request):
    """The test runs in a hermetic scope; this is the run's handle (clock,
    seed, real world)."""
    h = hermetic.current()
    if h is None or h.scope != request.node.nodeid:
        raise pytest.UsageError("hermetic_sandbox: %s is not in its hermetic scope" % request.node.nodeid)
    return h
