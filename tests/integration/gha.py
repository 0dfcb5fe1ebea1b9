#!/usr/bin/python3
# A small GitHub Actions job runner for tests/integration/ci_docs.sh: runs
# one job of a workflow (YAML from docs/ci.md) for one matrix entry, here,
# as the runner would: 'run:' steps with bash -eo pipefail in the work
# directory, '${{ }}' expressions of the kinds the recipes use, 'if:' with
# success(), failure() and always(); of the actions, upload-artifact is
# recorded (its name and the files it would keep), the others are no-ops
# (checkout: the work directory is the checkout). Prints one JSON object:
# the job's status, each step's outcome, the artifacts.
#   gha.py WORKFLOW.yaml JOB MATRIX_JSON JOB_INDEX WORKDIR OUTDIR
import glob, json, os, re, subprocess, sys
import yaml

wf_path, job_name, matrix_json, job_index, workdir, outdir = sys.argv[1:7]
wf = yaml.safe_load(open(wf_path))
job = wf["jobs"][job_name]
matrix = json.loads(matrix_json)
os.makedirs(outdir, exist_ok=True)
tmp = os.path.join(outdir, "runner-temp")
os.makedirs(tmp, exist_ok=True)
summary = os.path.join(outdir, "step-summary.md")
open(summary, "w").close()
env = dict(os.environ)
env.update({k: str(v) for k, v in (wf.get("env") or {}).items()})
env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
env.update({"GITHUB_ACTIONS": "true", "GITHUB_JOB": job_name, "GITHUB_STEP_SUMMARY": summary,
            "RUNNER_TEMP": tmp, "GITHUB_WORKSPACE": workdir, "CI": "true"})
ctx = {"matrix": matrix, "github": {"job": job_name, "workspace": workdir},
       "strategy": {"job-index": int(job_index)}, "runner": {"os": "Linux", "temp": tmp},
       "env": env, "steps": {}}


def lookup(expr):
    expr = expr.strip()
    if expr in ("always()", "failure()", "success()"):
        return expr
    cur = ctx
    for part in expr.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KeyError("unknown expression: " + expr)
    return cur


def subst(text):
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(lookup(m.group(1))), str(text))


def should_run(cond, failed):
    if cond is None:
        return not failed
    cond = re.sub(r"^\$\{\{(.*)\}\}$", r"\1", str(cond).strip()).strip()
    if cond == "always()":
        return True
    if cond == "failure()":
        return failed
    if cond == "success()":
        return not failed
    m = re.match(r"steps\.(\w+)\.outputs\.([\w-]+) != '(.*)'$", cond)
    if m:  # the hosted recipe's cache test: no cache here
        return not failed
    raise ValueError("unsupported if: " + cond)


failed = False
steps, artifacts = [], []
for i, step in enumerate(job.get("steps", [])):
    name = step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0]
    if not should_run(step.get("if"), failed):
        steps.append({"name": name, "outcome": "skipped"})
        continue
    if "run" in step:
        script = os.path.join(outdir, "step-%d.sh" % i)
        open(script, "w").write(subst(step["run"]))
        log = os.path.join(outdir, "step-%d.log" % i)
        with open(log, "w") as f:
            rc = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                                 cwd=workdir, env=env, stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
        steps.append({"name": name, "outcome": "success" if rc == 0 else "failure", "rc": rc, "log": log})
        failed = failed or rc != 0
        continue
    uses = step["uses"]
    w = {k: subst(v) for k, v in (step.get("with") or {}).items()}
    if uses.startswith("actions/upload-artifact@"):
        files = []
        for p in w["path"].split("\n"):
            p = p.strip()
            if not p:
                continue
            full = os.path.join(workdir, p)
            if os.path.isdir(full):
                files += [os.path.relpath(f, workdir) for f in glob.glob(full + "/**", recursive=True)
                          if os.path.isfile(f)]
            else:
                files += [os.path.relpath(f, workdir) for f in glob.glob(full)]
        ok = bool(files) or w.get("if-no-files-found") == "ignore"
        artifacts.append({"name": w["name"], "files": sorted(files)})
        steps.append({"name": name, "outcome": "success" if ok else "failure"})
        failed = failed or not ok
    else:
        steps.append({"name": name, "outcome": "success", "noop": uses})
print(json.dumps({"job": job_name, "matrix": matrix, "status": "failure" if failed else "success",
                  "steps": steps, "artifacts": artifacts, "summary": open(summary).read()}))
