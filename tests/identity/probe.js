// SPDX-License-Identifier: MIT
// What a Node program learns about the machine (tests/identity/probe.c's
// lines where Node has the path). argv[2], if given, is a directory to list.
const fs = require("fs"), os = require("os");
const first = (p) => { try { return fs.readFileSync(p, "utf8").split("\n")[0]; } catch (e) { return "-"; } };
const count = (p, k) => { try { return fs.readFileSync(p, "utf8").split("\n").filter((l) => l.startsWith(k)).length; } catch (e) { return "-"; } };
console.log("cpus.affinity", os.availableParallelism());
console.log("cpus.sysconf", os.cpus().length);
console.log("cpus.cpuinfo", count("/proc/cpuinfo", "processor"));
console.log("cpus.stat", count("/proc/stat", "cpu"));
console.log("cpus.online", first("/sys/devices/system/cpu/online"));
console.log("host.uname", os.hostname(), "-", os.release());
console.log("host.proc", first("/proc/sys/kernel/hostname"));
const d = new Date(1700000000000);
console.log("tz", Intl.DateTimeFormat().resolvedOptions().timeZone, d.getTimezoneOffset());
console.log("locale", Intl.DateTimeFormat().resolvedOptions().locale);
console.log("memory.sysconf", Math.floor(os.totalmem() / (1 << 20)));
console.log("memory.meminfo", first("/proc/meminfo"));
if (process.argv[2]) {
  const dir = fs.opendirSync(process.argv[2]);
  const names = [];
  let e;
  while ((e = dir.readSync()) !== null) names.push(e.name);
  dir.closeSync();
  console.log("dir " + names.filter((n) => !n.startsWith(".")).join(" "));
}
