// jithot.js — `node --perf-basic-prof jithot.js [SECONDS]`: two functions V8 compiles, called in
// turn for SECONDS (default 3) of wall time: hotLoop (integer arithmetic, most of the time) and
// warmLoop (square roots). node writes /tmp/perf-PID.map as it compiles them.
function hotLoop(n) {
	let x = 1;
	for (let i = 0; i < n; i++)
		x = (x * 31 + i) % 1000003;
	return x;
}

function warmLoop(n) {
	let d = 1;
	for (let i = 0; i < n; i++)
		d = Math.sqrt(d * d + i) + 1;
	return d;
}

const end = Date.now() + 1000 * (Number(process.argv[2]) || 3);
let acc = 0;
while (Date.now() < end) {
	acc += hotLoop(200000);
	acc += warmLoop(30000);
}
console.log(acc > 0 ? "done" : "?");
