// static-bench.sh: ns per time.Now() (the synthetic vDSO's realtime, and
// the kernel vDSO's monotonic it forwards to) and per 16-byte crypto/rand
// read (getrandom, answered by the supervisor when enrolled).
package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var sink int64
	t0 := time.Now()
	for i := 0; i < n; i++ {
		sink += time.Now().UnixNano()
	}
	// Real elapsed time from the monotonic reading (real under the
	// supervisor: docs/static.md).
	fmt.Printf("time_now %.1f\n", float64(time.Since(t0).Nanoseconds())/float64(n))
	b := make([]byte, 16)
	m := n / 100
	t0 = time.Now()
	for i := 0; i < m; i++ {
		rand.Read(b)
	}
	fmt.Printf("crypto_rand_16 %.1f\n", float64(time.Since(t0).Nanoseconds())/float64(m))
	if sink == 42 {
		fmt.Println()
	}
}
