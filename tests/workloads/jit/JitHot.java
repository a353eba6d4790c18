/* JitHot.java — `java JitHot [SECONDS]`: two methods the JIT compiles, in fixed proportions of
 * work: hotLoop (an integer hash, about half of the time) and warmLoop (square roots, most of the
 * rest), called in turn for SECONDS (default 3) of wall time. Run with
 * -XX:CompileCommand=dontinline,JitHot::* so that each stays a method of its own in the code
 * cache, and -XX:+DumpPerfMapAtExit or `jcmd PID Compiler.perfmap` for /tmp/perf-PID.map. */
public class JitHot {
	static long hotLoop(long seed, int n) {
		long x = seed;
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 29);
		return x;
	}

	static long warmLoop(long seed, int n) {
		double d = seed & 0xffff;
		for (int i = 0; i < n; i++)
			d = Math.sqrt(d * d + i) + 1.0;
		return (long)d;
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
		long end = System.nanoTime() + (long)(secs * 1e9), acc = 0;

		while (System.nanoTime() < end) {
			acc += hotLoop(acc, 2000000);
			acc += warmLoop(acc, 300000);
		}
		System.out.println(acc == 42 ? "?" : "done");
	}
}
