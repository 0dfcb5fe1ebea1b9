// A 1 ms timeout on a child that is still starting: bare, a process start
// takes longer than 1 ms and the timer always fires first. Enrolled, the
// start costs 2 ms of the run's time (docs/virtual-time.md, "A process
// start takes time"), so it fires too; a 10 s timeout lets the child run.
// The child's stdio is ignored: with pipes, whether one epoll_wait sees
// their end and SIGCHLD's together or apart is the kernel's order (the
// program's own race), and check-determinism would name it.
const { spawnSync } = require("child_process");
const a = spawnSync(process.execPath, ["-e", "0"], { timeout: 1, stdio: "ignore" });
console.log("timeout 1:", a.error ? a.error.code : "none", "signal", a.signal);
const b = spawnSync(process.execPath, ["-e", "0"], { timeout: 10000, stdio: "ignore" });
console.log("timeout 10000:", b.error ? b.error.code : "none", "status", b.status);
