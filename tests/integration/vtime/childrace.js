// A parent's interval timer races three children's output: each child
// sleeps 10 ms and prints; all three sleeps end at one
// virtual instant. Prints every event with its virtual time: one seed, one
// line (the three waits due at one deadline end one per idle moment, in
// the order of their keys, never in the order a loaded kernel runs them).
const { spawn } = require('child_process');
const out = [];
let n = 0;
const t0 = Date.now();
const iv = setInterval(() => { out.push('t' + n++ + '@' + (Date.now() - t0)); }, 3);
function one(i, done) {
  const c = spawn('/bin/sh', ['-c', 'sleep 0.01; echo b' + i]);
  c.stdout.on('data', d => out.push(d.toString().trim().replace(/\n/g, '+') + '@' + (Date.now() - t0)));
  c.on('close', () => { out.push('close' + i + '@' + (Date.now() - t0)); done(); });
}
let left = 3;
for (let i = 0; i < 3; i++)
  one(i, () => { if (--left == 0) { clearInterval(iv); console.log(out.join(' ')); } });
