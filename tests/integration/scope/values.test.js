// Each test prints the time and 8 bytes of the OS's entropy, and waits
// 5 s on a timer: with the hooks, a test prints the same whatever ran before.
const test = require('node:test');
const fs = require('fs');
function osRandom() {
	const fd = fs.openSync('/dev/urandom', 'r'), b = Buffer.alloc(8);
	fs.readSync(fd, b, 0, 8, null);
	fs.closeSync(fd);
	return b.toString('hex');
}
for (const name of ['alpha', 'beta']) {
	test(name, async () => {
		const t0 = Date.now();
		await new Promise((r) => setTimeout(r, 5000));
		console.log(name, t0, Date.now() - t0, osRandom());
	});
}
