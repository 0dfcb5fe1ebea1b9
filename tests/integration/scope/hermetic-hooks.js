// node:test hooks that run every test in a hermetic scope of its own, with
// no FFI: the shim interprets opening /dev/hermetic/... (README, "Scopes").
// Load it with: node --test --require ./hermetic-hooks.js
const fs = require('fs');
const { beforeEach, afterEach } = require('node:test');

function hermetic(op) {
	fs.closeSync(fs.openSync('/dev/hermetic/' + op, 'r'));
}
beforeEach((t) => hermetic('scope/enter?name=' + encodeURIComponent(t.name)));
afterEach(() => hermetic('scope/leave'));
