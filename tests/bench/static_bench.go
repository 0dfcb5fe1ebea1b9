// static-bench.sh: MODE N does N time.Now() calls ("now"), N 16-byte
// crypto/rand reads ("rand": drawn in the process by the synthetic vDSO
// when enrolled, docs/static.md), N 1 ms sleeps ("sleep", virtual when enrolled) or N waits on
// a context.WithTimeout(1ms) ("ctx": a timer, the runtime's epoll and
// futex waits) or N runtime.GC() with GOMAXPROCS 4 ("gc": stopping the
// world, whose 100 us futex polls of the other threads come while the run
// is busy, docs/static.md) or N 100 ms sleeps while another goroutine
// computes ("busy": the run is never idle, so only the lag bound moves its
// clock, docs/virtual-time.md). The bench
// times it from outside: enrolled, the program's own clock is the run's.
package main

import (
	"context"
	"crypto/rand"
	"os"
	"runtime"
	"strconv"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	var sink int64
	b := make([]byte, 16)
	if os.Args[1] == "gc" {
		runtime.GOMAXPROCS(4)
	}
	if os.Args[1] == "busy" && n > 0 {
		go func() {
			for {
				sink++
			}
		}()
	}
	for i := 0; i < n; i++ {
		switch os.Args[1] {
		case "now":
			sink += time.Now().UnixNano()
		case "rand":
			rand.Read(b)
		case "sleep":
			time.Sleep(time.Millisecond)
		case "sleep2s":
			time.Sleep(2 * time.Second)
		case "gc":
			runtime.GC()
		case "busy":
			time.Sleep(100 * time.Millisecond)
		case "ctx":
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			<-ctx.Done()
			cancel()
		}
	}
	if sink == 42 {
		os.Exit(3)
	}
}
