// gochurn.go — `gochurn [SECONDS]`: a Go program as Go programs run, for go.sh and
// bench/run_go.sh. Four goroutines build maps of string keys, sort the keys and drop them until
// the process has used SECONDS of CPU time (default 3: its sample count does not depend on what
// else the machine runs); then it prints a checksum.
//
// The allocations keep the garbage collector busy: its marking and the write barriers' flushes
// run on each thread's g0 stack (runtime.systemstack), and goroutines grow their stacks
// (runtime.morestack), which are the runtime's stack switches a profiler must not unwind past.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func churn(seed int, done *int32) int {
	total := 0
	for atomic.LoadInt32(done) == 0 {
		m := make(map[string][]int)
		for i := 0; i < 20000; i++ {
			k := strconv.Itoa((i*7919 + seed) % 5003)
			m[k] = append(m[k], i)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		total += len(keys[0])
	}
	return total
}

func main() {
	secs := 3.0
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || v < 0 {
			fmt.Fprintln(os.Stderr, "usage: gochurn [SECONDS]")
			os.Exit(2)
		}
		secs = v
	}
	budget := time.Duration(secs * float64(time.Second))
	sums := make([]int, 4)
	var done int32
	var wg sync.WaitGroup
	for g := range sums {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			sums[g] = churn(g, &done)
		}(g)
	}
	for cpuTime() < budget {
		time.Sleep(10 * time.Millisecond)
	}
	atomic.StoreInt32(&done, 1)
	wg.Wait()
	fmt.Println(sums[0] + sums[1] + sums[2] + sums[3])
}
