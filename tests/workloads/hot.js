// hot.js SECONDS — a JavaScript hot loop for node --perf-basic-prof (node_jit.sh): V8 compiles
// hotLoop and outer; their frames have no CFI, only V8's frame pointers.
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i % 7); return s; }
function outer(n) { return hotLoop(n) + hotLoop(n / 2); }
const end = Date.now() + 1000 * Number(process.argv[2] || 3);
let t = 0;
while (Date.now() < end) t += outer(2e6);
if (!(t > 0)) process.exit(1);
