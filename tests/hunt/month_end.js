// Flaky by date: "tomorrow" computed as the same day of the next month's
// day + 1 breaks on the last day of a month. hermetic hunt names the cause
// "date/time (the clock's start)".
const now = new Date();
const tomorrow = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
// the bug: assumes tomorrow is in the same month
if (tomorrow.getMonth() !== now.getMonth()) {
	console.error(`expected ${tomorrow.toDateString()} in month ${now.getMonth() + 1}`);
	process.exit(1);
}
console.log('ok');
