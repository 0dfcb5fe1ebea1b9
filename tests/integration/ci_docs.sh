# docs/ci.md stays true: its YAML and TOML parse, every job runs the suite
# under enroll --record=journals/ and keeps journals/ only when it fails,
# and the annotation step's jq filters turn a real --report into the
# annotations the document promises.
source "$(dirname "$0")/../lib.sh"
need_root ci_docs || exit 0
cd "$TOP"
command -v jq >/dev/null || { fail "jq" "not installed (make deps)"; exit 1; }
SYSPY=/usr/bin/python3

"$SYSPY" - docs/ci.md "$T/jq-filters" >"$T/parse.out" 2>&1 <<'EOF'
import re, sys, tomllib, yaml
text = open(sys.argv[1]).read()
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)))
blocks = re.findall(r"```(yaml|toml)\n(.*?)```", text, re.S)
docs = []
for kind, body in blocks:
    try:
        docs.append((kind, yaml.safe_load(body) if kind == "yaml" else tomllib.loads(body)))
    except Exception as e:
        check(False, "docs/ci.md: a %s block parses" % kind, str(e))
check(len(docs) == len(blocks) and len(docs) >= 5, "docs/ci.md: every YAML and TOML block parses",
      "%d of %d" % (len(docs), len(blocks)))
filters = []
gh = [d for k, d in docs if k == "yaml" and "jobs" in d]
gl = [d for k, d in docs if k == "yaml" and "test" in d and "script" in d["test"]]
check(len(gh) >= 3 and len(gl) == 1, "GitHub Actions and GitLab CI jobs are there", "%d, %d" % (len(gh), len(gl)))
for n, d in enumerate(gh):
    for name, job in d["jobs"].items():
        name = "%d/%s" % (n + 1, name)
        steps = job.get("steps", [])
        runs = " ".join(s.get("run", "") for s in steps)
        if "hermetic enroll" not in runs:
            continue
        check("hermetic enroll --record=journals/" in runs, "GitHub job %s: the suite runs under enroll --record=journals/" % name, runs)
        up = [s for s in steps if "upload-artifact" in s.get("uses", "") and "journals" in str(s.get("with", {}).get("path", ""))]
        check(up and all(s.get("if") == "failure()" for s in up),
              "GitHub job %s: journals/ uploaded only when the job fails" % name, up)
        for s in steps:
            filters += [l.strip() for l in s.get("run", "").splitlines() if l.strip().startswith("jq ")]
job = gl[0]["test"]
check(any("hermetic enroll --record=journals/" in l for l in job["script"]) and
      job["artifacts"]["when"] == "on_failure" and "journals/" in job["artifacts"]["paths"],
      "GitLab job: enroll --record=journals/, journals/ kept on failure only", job)
toml = [d for k, d in docs if k == "toml"]
check(toml and "/run/hermetic:/run/hermetic" in toml[0]["runners"]["docker"]["volumes"],
      "the GitLab runner mounts /run/hermetic at /run/hermetic", toml)
ctr = [j for d in gh for j in d["jobs"].values() if isinstance(j.get("container"), dict)]
check(ctr and "--volume /run/hermetic:/run/hermetic" in ctr[0]["container"]["options"],
      "the container job mounts /run/hermetic at /run/hermetic", ctr)
open(sys.argv[2], "w").write("\n".join(filters) + "\n")
check(len(filters) >= 2, "the annotation step has its jq filters", filters)
EOF
grep -E '^(PASS|FAIL) ' "$T/parse.out" || fail "docs/ci.md parses" "$(tail -n 5 "$T/parse.out" | tr '\n' '|')"

# A real report: a refused run and a run with a static binary (no shim:
# --supervise off, so that it escapes; static.sh tests the supervisor).
source "$(dirname "$0")/nethost.sh"
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "see above"; exit 1; }
printf '#include <sys/random.h>\nint main(void){char b[8];return getrandom(b,8,0)!=8;}\n' >"$T/sr.c"
cc -static -O1 -o "$T/sr" "$T/sr.c"
cd "$T"
"$HERMETIC" enroll --report hermetic-report.jsonl -- sh -c "'$PY' '$T/probe.py' tcp $NH_HOST $NH_TCP; exit 1" >/dev/null 2>&1
"$HERMETIC" enroll --supervise off --report hermetic-report.jsonl -- sh -c "'$T/sr'; exit 2" >/dev/null 2>&1
: >"$T/annotations"
while read -r f; do
	[ -n "$f" ] && bash -c "$f" >>"$T/annotations" 2>&1
done <"$T/jq-filters"
check "the jq filters give one ::error per failing run, with its repro command" sh -c "
	test \$(grep -c '^::error title=hermetic run [0-9]* exited 2::seed [0-9]*, now .*, 0 refused connections; repeat with: hermetic enroll --seed' '$T/annotations') = 1 &&
	grep -q '^::error title=hermetic run [0-9]* exited 1::.*, 1 refused connections; repeat with: hermetic enroll' '$T/annotations'"
check "and a ::warning for the run a process escaped the shim in" \
	grep -q '^::warning title=hermetic coverage::1 processes ran without the shim' "$T/annotations"
