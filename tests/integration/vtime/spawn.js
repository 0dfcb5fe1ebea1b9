const { spawnSync } = require("child_process");
const r = spawnSync("sleep", ["3600"], { timeout: 3000 });
console.log("status", r.status, "signal", r.signal, r.error ? r.error.code : "");
