# docs/ci.md stays true: its YAML and TOML parse and say what the document
# promises (the suite enrolled, journals kept only on failure, a job
# summary, the real-time limit outside the run, artifact names unique
# across the matrix, the hosted package built where it is installed); the
# self-hosted and pytest jobs run here, every matrix entry, step by step with
# their if: conditions (tests/integration/gha.py), against a private
# daemon and a project whose suites pass or fail; the GitLab job's script
# runs; the annotation filters turn real report lines into annotations; the
# Kubernetes manifests are checked against the daemon's and the CLI's options.
source "$(dirname "$0")/../lib.sh"
need_root ci_docs || exit 0
command -v jq >/dev/null || { fail "jq" "not installed (make deps)"; exit 1; }
SYSPY=/usr/bin/python3
"$SYSPY" -c 'import yaml' 2>/dev/null || { fail "python3-yaml" "not installed (make deps)"; exit 1; }
GHA=$TOP/tests/integration/gha.py
cd "$TOP"

# --- what the document says -------------------------------------------------------------
"$SYSPY" - docs/ci.md "$T" >"$T/parse.out" 2>&1 <<'EOF'
import itertools, json, re, sys, tomllib, yaml
text = open(sys.argv[1]).read()
out = sys.argv[2]
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)))
blocks = re.findall(r"```(yaml|toml)\n(.*?)```", text, re.S)
docs = []
for kind, body in blocks:
    try:
        docs.append((kind, yaml.safe_load(body) if kind == "yaml" else tomllib.loads(body), body))
    except Exception as e:
        check(False, "docs/ci.md: a %s block parses" % kind, str(e))
check(len(docs) == len(blocks) and len(docs) >= 6, "docs/ci.md: every YAML and TOML block parses",
      "%d of %d" % (len(docs), len(blocks)))
check("ends the runs still going" not in text and "restart it between jobs" not in text and
      "Enforcement outlives the daemon" in text and "adopts the running runs" in text,
      "docs/ci.md says what the daemon does now: enforcement outlives it, the next one adopts the runs")
gh = [(d, body) for k, d, body in docs if k == "yaml" and isinstance(d, dict) and "jobs" in d]
gl = [d for k, d, _ in docs if k == "yaml" and isinstance(d, dict) and "test" in d and "script" in d["test"]]
check(len(gh) >= 4 and len(gl) == 1, "GitHub Actions workflows and a GitLab CI job are there", "%d, %d" % (len(gh), len(gl)))

def matrix_entries(job):
    m = (job.get("strategy") or {}).get("matrix") or {}
    keys = [k for k in m if k not in ("include", "exclude")]
    return [dict(zip(keys, vals)) for vals in itertools.product(*[m[k] for k in keys])] or [{}]

def expand(s, name, matrix, index):
    s = s.replace("${{ github.job }}", name).replace("${{ strategy.job-index }}", str(index))
    return re.sub(r"\$\{\{ matrix\.(\w+) \}\}", lambda m: str(matrix[m.group(1)]), s)

runs = []
filters = []
for n, (d, body) in enumerate(gh):
    names = []
    for name, job in d["jobs"].items():
        steps = job.get("steps", [])
        run = " ".join(s.get("run", "") for s in steps)
        entries = matrix_entries(job)
        for i, m in enumerate(entries):
            for s in steps:
                if "upload-artifact" in s.get("uses", ""):
                    names.append(expand(s["with"]["name"], name, m, i))
        if "hermetic enroll" not in run:
            continue
        tag = "workflow %d, job %s" % (n + 1, name)
        check("hermetic enroll --record=journals/" in run, "%s: the suite runs under enroll --record=journals/" % tag, run)
        up = [s for s in steps if "upload-artifact" in s.get("uses", "") and "journals" in str(s.get("with", {}).get("path", ""))]
        check(up and all(s.get("if") == "failure()" for s in up),
              "%s: journals/ uploaded only when the job fails" % tag, up)
        check(job.get("timeout-minutes") and not re.search(r"enroll[^\n]* -- *timeout ", run),
              "%s: the real-time limit is the job's (timeout-minutes), none inside the run" % tag, job.get("timeout-minutes"))
        sm = [s for s in steps if "hermetic report --markdown" in s.get("run", "") and "GITHUB_STEP_SUMMARY" in s.get("run", "")]
        check(sm and all(s.get("if") == "always()" for s in sm),
              "%s: a job summary step (hermetic report --markdown), run whatever the suite did" % tag, sm)
        for s in steps:
            filters += [l.strip() for l in s.get("run", "").splitlines() if l.strip().startswith("jq -r 'select(")]
        if "runs-on" in job and job["runs-on"] == ["self-hosted", "linux"] and "container" not in job:
            for i, m in enumerate(entries):
                runs.append({"workflow": n + 1, "job": name, "matrix": m, "index": i})
        open("%s/wf-%d.yaml" % (out, n + 1), "w").write(body)
    check(len(names) == len(set(names)), "workflow %d: every artifact name is unique across its matrix (upload-artifact@v4)" % (n + 1), names)
    if "package" in d["jobs"] and "test" in d["jobs"]:
        p, t = d["jobs"]["package"], d["jobs"]["test"]
        key = [s for s in p["steps"] if "actions/cache" in s.get("uses", "")]
        check(p["runs-on"] == t["runs-on"] and t.get("needs") == "package",
              "hosted: the package is built on the image it is installed on", (p["runs-on"], t["runs-on"]))
        img = [s for s in p["steps"] if s.get("id") == "image"]
        check(key and img and "$ImageOS" in img[0]["run"] and "$ImageVersion" in img[0]["run"] and
              "GITHUB_OUTPUT" in img[0]["run"] and
              all(x in key[0]["with"]["key"] for x in ("steps.image.outputs.id", "env.HERMETIC_REF")) and
              "build/*.deb" in key[0]["with"]["path"],
              "hosted: the .deb is cached by hermetic's version and the runner image", key)
job = gl[0]["test"]
check(any("hermetic enroll --record=journals/" in l for l in job["script"]) and "journals/" in job["artifacts"]["paths"] and
      job.get("timeout") and any("hermetic report --markdown" in l for l in job["after_script"]),
      "GitLab job: enroll --record=journals/, journals/ kept, a timeout outside the run, the Markdown report", job)
open("%s/gitlab.json" % out, "w").write(json.dumps(job))
toml = [d for k, d, _ in docs if k == "toml"]
check(toml and "/run/hermetic:/run/hermetic" in toml[0]["runners"]["docker"]["volumes"],
      "the GitLab runner mounts /run/hermetic at /run/hermetic", toml)
ctr = [j for d, _ in gh for j in d["jobs"].values() if isinstance(j.get("container"), dict)]
check(ctr and "--volume /run/hermetic:/run/hermetic" in ctr[0]["container"]["options"],
      "the container job mounts /run/hermetic at /run/hermetic", ctr)
open("%s/jq-filters" % out, "w").write("\n".join(filters) + "\n")
check(len(filters) >= 3, "the annotation step has its jq filters", filters)
open("%s/runs.json" % out, "w").write(json.dumps(runs))
check({r["job"] for r in runs} == {"test", "pytest"} and len(runs) == 4,
      "the self-hosted jobs to run here: test and pytest, two matrix entries each", runs)
EOF
grep -E '^(PASS|FAIL) ' "$T/parse.out" || fail "docs/ci.md parses" "$(tail -n 5 "$T/parse.out" | tr '\n' '|')"

# --- the Kubernetes manifests ---------------------------------------------------------------
"$HERMETICD" --help >"$T/hermeticd.help" 2>&1
"$HERMETIC" enroll --help >"$T/enroll.help" 2>&1
"$SYSPY" - packaging/kubernetes "$T/hermeticd.help" "$T/enroll.help" <<'EOF'
import os, re, sys, yaml
d, dhelp, ehelp = sys.argv[1:4]
dopts = set(re.findall(r"(--[a-z][a-z-]*)", open(dhelp).read()))
eopts = set(re.findall(r"(--[a-z][a-z-]*)", open(ehelp).read()))
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)))
try:
    ds_docs = list(yaml.safe_load_all(open(os.path.join(d, "hermeticd.yaml"))))
    job = yaml.safe_load(open(os.path.join(d, "job-pod.yaml")))
    cf = open(os.path.join(d, "Containerfile")).read()
    ok = True
except Exception as e:
    ok, why = False, str(e)
check(ok, "packaging/kubernetes: the manifests parse", "" if ok else why)
if not ok:
    sys.exit(0)
for doc in ds_docs + [job]:
    check(all(doc.get(k) for k in ("apiVersion", "kind")) and doc.get("metadata", {}).get("name"),
          "%s %s: apiVersion, kind and metadata.name" % (doc.get("kind"), doc.get("metadata", {}).get("name")), doc.get("kind"))
ns = [x for x in ds_docs if x["kind"] == "Namespace"]
ds = [x for x in ds_docs if x["kind"] == "DaemonSet"]
check(len(ns) == 1 and len(ds) == 1 and ds[0]["apiVersion"] == "apps/v1" and
      ds[0]["metadata"]["namespace"] == ns[0]["metadata"]["name"],
      "hermeticd.yaml: a Namespace and an apps/v1 DaemonSet in it")
ds = ds[0]
spec = ds["spec"]["template"]["spec"]
labels = ds["spec"]["template"]["metadata"]["labels"]
check(all(labels.get(k) == v for k, v in ds["spec"]["selector"]["matchLabels"].items()),
      "the DaemonSet's selector matches its pod template's labels")
c = spec["containers"][0]
vols = {v["name"]: v for v in spec["volumes"]}
mounts = {m["name"]: m for m in c["volumeMounts"]}
check(all(n in vols for n in mounts) and all(n in mounts for n in vols),
      "every volumeMount names a volume, and every volume is mounted", (sorted(mounts), sorted(vols)))
host = {vols[n]["hostPath"]["path"]: mounts[n]["mountPath"] for n in mounts if "hostPath" in vols.get(n, {})}
need = ["/sys/fs/cgroup", "/sys/fs/bpf", "/run/hermetic", "/var/lib/hermetic", "/sys/kernel/tracing"]
check(all(host.get(p) == p for p in need),
      "the DaemonSet mounts each node path hermeticd needs at the same path (cgroup2, bpffs, tracefs, /run/hermetic, the store)", host)
check(spec.get("hostPID") is True and c["securityContext"].get("privileged") is True,
      "the daemon's pod shares the node's pid namespace and is privileged")
args = c.get("args", [])
bad = [a for a in args if a.startswith("--") and a.split("=")[0] not in dopts]
check(c["command"] == ["/usr/sbin/hermeticd"] and not bad, "every hermeticd option in the DaemonSet is one hermeticd has", bad)
val = dict(zip(args[::2], args[1::2]))
check(val.get("--runtime-dir") == "/run/hermetic" and val.get("--store", "").startswith("/var/lib/hermetic/"),
      "the daemon's runtime directory and store are on the node's mounted paths", val)
probe = c.get("readinessProbe", {}).get("exec", {}).get("command")
check(probe == ["hermetic", "status"], "the readiness probe asks the daemon itself (hermetic status)", probe)
gid = re.search(r"groupadd --system --gid (\d+) hermetic", cf)
check(gid and val.get("--socket-group") == "hermetic", "the image makes the socket's group hermetic with a fixed gid", cf)
js = job["spec"]
jc = js["containers"][0]
jv = {v["name"]: v for v in js["volumes"]}
jm = [m for m in jc["volumeMounts"] if jv.get(m["name"], {}).get("hostPath", {}).get("path") == "/run/hermetic"]
check(job["kind"] == "Pod" and len(jm) == 1 and jm[0]["mountPath"] == "/run/hermetic",
      "the job pod mounts the node's /run/hermetic at /run/hermetic")
check(gid and int(gid.group(1)) in js["securityContext"].get("supplementalGroups", []) and
      js["securityContext"].get("runAsNonRoot") is True,
      "the job pod runs unprivileged with the socket's gid among its groups", js["securityContext"])
cmd = jc["command"]
ebad = [a for a in cmd[2:cmd.index("--")] if a.startswith("--") and a.split("=")[0] not in eopts]
check(cmd[:2] == ["hermetic", "enroll"] and not ebad and js.get("activeDeadlineSeconds"),
      "the job pod enrolls with real enroll options, its real-time limit outside the run", (cmd, ebad))
EOF

# --- the jobs, run ------------------------------------------------------------------------------
source "$(dirname "$0")/nethost.sh"
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "see above"; exit 1; }
# The project: 'make test SUITE=unit' passes, SUITE=integration connects to
# the test host (refused) and fails; pytest shards, the second with a
# failing test.
P=$T/proj
mkdir -p "$P/tests/shard1" "$P/tests/shard2" "$T/bin"
cat >"$P/Makefile" <<EOF
SUITE ?= integration
test:
	@if [ "\$(SUITE)" = unit ]; then echo unit tests pass; else '$PY' '$T/probe.py' tcp $NH_HOST $NH_TCP; exit 1; fi
EOF
cat >"$P/tests/shard1/test_one.py" <<'EOF'
import random
def test_passes():
    assert random.random() < 2
EOF
cat >"$P/tests/shard2/test_two.py" <<'EOF'
import uuid
def test_passes():
    assert uuid.uuid4()
def test_fails():
    assert uuid.uuid4().hex == "0" * 32
EOF
# Debian's python3 (its pytest) and the Python package where
# python3-hermetic puts it.
printf '#!/bin/sh\nexec %s "$@"\n' "$SYSPY" >"$T/bin/python3"
chmod +x "$T/bin/python3"
make -s -C "$TOP" install-python DESTDIR="$T/pyroot" prefix=/usr >/dev/null
export PYTHONPATH=$T/pyroot/usr/lib/python3/dist-packages
export PATH="$T/bin:$PATH"
"$SYSPY" - "$T/runs.json" >"$T/runs.list" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["workflow"], r["job"], r["index"], json.dumps(r["matrix"]))
EOF
while read -r wf job index matrix; do
	w=$T/work-$job-$index
	rm -rf "$w" && cp -r "$P" "$w"
	timeout 600 "$SYSPY" "$GHA" "$T/wf-$wf.yaml" "$job" "$matrix" "$index" "$w" "$T/out-$job-$index" >"$T/res-$job-$index.json" 2>"$T/res-$job-$index.err" ||
		fail "gha.py runs $job #$index" "$(tail -n 3 "$T/res-$job-$index.err" | tr '\n' '|')"
done <"$T/runs.list"
"$SYSPY" - "$T" "$NH_HOST:$NH_TCP" <<'EOF'
import json, os, sys, glob
t, dest = sys.argv[1:3]
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, str(why)[:600])))
def res(job, i):
    try:
        return json.load(open("%s/res-%s-%d.json" % (t, job, i)))
    except Exception as e:
        return {"status": "?", "steps": [], "artifacts": [], "summary": "", "error": str(e)}
def outcomes(r):
    return [s["outcome"] for s in r["steps"]]
def log(r, word):
    return "".join(open(s["log"]).read() for s in r["steps"] if word in s["name"] and "log" in s)
u, i = res("test", 0), res("test", 1)
check(u["status"] == "success" and u["summary"].startswith("### hermetic: 1 run, 0 failed") and
      outcomes(u)[-1] == "skipped" and not u["artifacts"],
      "job test (unit): passes, its summary says 1 run, 0 failed, no journals uploaded", (u["status"], outcomes(u), u["summary"][:200]))
check(i["status"] == "failure" and i["summary"].startswith("### hermetic: 1 run, 1 failed") and
      ("1: %s (python3)" % dest) in i["summary"] and "hermetic enroll --seed" in i["summary"],
      "job test (integration): fails, its summary has the refused destination and the repeat line", (i["status"], i["summary"][:400]))
ann = log(i, "Annotate")
check("::error title=hermetic run " in ann and "exited 2::" in ann and "1 refused connections; repeat with: hermetic enroll" in ann,
      "job test (integration): the annotation step gives an ::error with the repeat line", ann)
a = i["artifacts"]
check(len(a) == 1 and a[0]["name"] == "hermetic-journals-test-integration" and
      any(f.endswith(".hjournal") for f in a[0]["files"]) and "journals/index.json" in a[0]["files"],
      "job test (integration): the journals are uploaded as hermetic-journals-test-integration", a)
p1, p2 = res("pytest", 0), res("pytest", 1)
j1 = [x for x in p1["artifacts"] if x["name"] == "junit-pytest-1"]
check(p1["status"] == "success" and j1 and j1[0]["files"] == ["junit-1.xml"] and
      not [x for x in p1["artifacts"] if "journals" in x["name"]],
      "job pytest (shard 1): passes, keeps junit-1.xml as junit-pytest-1, no journals", (p1["status"], outcomes(p1), p1["artifacts"], log(p1, "pytest")[-400:]))
j2 = [x for x in p2["artifacts"] if x["name"] == "junit-pytest-2"]
jr = [x for x in p2["artifacts"] if x["name"] == "hermetic-journals-pytest-2"]
junit = open(os.path.join(t, "work-pytest-1", "junit-2.xml")).read() if os.path.exists(os.path.join(t, "work-pytest-1", "junit-2.xml")) else ""
index = json.load(open(os.path.join(t, "work-pytest-1", "journals", "index.json"))) if os.path.exists(os.path.join(t, "work-pytest-1", "journals", "index.json")) else []
check(p2["status"] == "failure" and j2 and 'failures="1"' in junit and jr and
      any(f.endswith(".hjournal") for f in jr[0]["files"]) and
      [e.get("scope") for e in index] == ["tests/shard2/test_two.py::test_fails"],
      "job pytest (shard 2): fails, a JUnit report with the failure, the failing test's journal named by its node id",
      (p2["status"], outcomes(p2), p2["artifacts"], index, log(p2, "pytest")[-600:]))
check("Journals of failing tests" in p2["summary"] and "tests/shard2/test_two.py::test_fails" in p2["summary"] and
      p2["summary"].startswith("### hermetic: 1 run, 1 failed"),
      "job pytest (shard 2): the summary has the run and the failing test's journal", p2["summary"][:600])
names = [x["name"] for r in (u, i, p1, p2) for x in r["artifacts"]]
check(len(names) == len(set(names)), "the artifacts of every job and matrix entry have distinct names", names)
EOF

# The GitLab job's script and after_script, as the shell executor runs them.
G=$T/gitlab
cp -r "$P" "$G"
jq -r '.script[]' "$T/gitlab.json" >"$G/script.sh"
jq -r '.after_script[]' "$T/gitlab.json" >"$G/after.sh"
(cd "$G" && bash -e script.sh) >"$T/gl.out" 2>&1
grc=$?
(cd "$G" && bash after.sh) >"$T/gl.after" 2>&1
if [ $grc != 0 ] && grep -q '^### hermetic: 1 run, 1 failed' "$G/hermetic-report.md" 2>/dev/null &&
	grep -q '^hermetic enroll --seed' "$T/gl.after" && ls "$G"/journals/*.hjournal >/dev/null 2>&1; then
	pass "GitLab job: the failing suite fails the script; after_script writes hermetic-report.md and the repro line; journals/ has the journal"
else
	fail "GitLab job runs" "rc=$grc $(tr '\n' '|' <"$T/gl.after") $(head -n 2 "$G/hermetic-report.md" 2>&1 | tr '\n' '|')"
fi

# The annotation filters on real lines: a refused run, a run with a static
# binary (no shim), and hermetic's own failure (no daemon).
printf '#include <sys/random.h>\nint main(void){char b[8];return getrandom(b,8,0)!=8;}\n' >"$T/sr.c"
cc -static -O1 -o "$T/sr" "$T/sr.c"
cd "$T"
"$HERMETIC" enroll --report hermetic-report.jsonl -- sh -c "'$PY' '$T/probe.py' tcp $NH_HOST $NH_TCP; exit 1" >/dev/null 2>&1
"$HERMETIC" enroll --supervise off --report hermetic-report.jsonl -- sh -c "'$T/sr'; exit 2" >/dev/null 2>&1
HERMETIC_SOCKET=$T/none.sock "$HERMETIC" enroll --report hermetic-report.jsonl -- true >/dev/null 2>&1
: >"$T/annotations"
while read -r f; do
	[ -n "$f" ] && bash -c "$f" >>"$T/annotations" 2>&1
done <"$T/jq-filters"
check "the jq filters give one ::error per failing run, with its repro command" sh -c "
	test \$(grep -c '^::error title=hermetic run [0-9]* exited 2::seed [0-9]*, now .*, 0 refused connections; repeat with: hermetic enroll --seed' '$T/annotations') = 1 &&
	grep -q '^::error title=hermetic run [0-9]* exited 1::.*, 1 refused connections; repeat with: hermetic enroll' '$T/annotations'"
check "and a ::warning for the run a process escaped the shim in" \
	grep -q '^::warning title=hermetic coverage::1 processes ran without the shim' "$T/annotations"
check "and an ::error for hermetic's own failure, with its reason and message on one line" \
	grep -q "^::error title=hermetic itself failed (no_daemon, exit 69)::cannot reach hermeticd at $T/none.sock" "$T/annotations"

# The real-time limit outside the run: a spinning command (which a timeout
# inside, on the virtual clock, would never end) is ended by a timeout
# around enroll, and its report line is still written.
timeout 3 "$HERMETIC" enroll --report "$T/spin.jsonl" -- sh -c 'while :; do :; done' >/dev/null 2>&1
rc=$?
spin=$("$SYSPY" -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(d["exit_status"], d["signal"], d["hermetic_error"])' "$T/spin.jsonl" 2>&1)
if [ $rc = 124 ] && [ "$spin" = "143 15 None" ]; then
	pass "timeout 3 hermetic enroll -- a spinning command: ended in real time, its report line says 143 (SIGTERM)"
else
	fail "a timeout around enroll ends a spinning run" "rc=$rc $spin"
fi
