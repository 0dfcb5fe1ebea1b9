// What record and replay must reproduce for a process without the shim
// (static.sh): the wall clock, crypto/rand bytes, math/rand values (Go
// 1.20+ seeds them from the OS; 1.19 from a constant) and time.Since
// across a sleep (the monotonic clock and a virtual wait).
package main

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand"
	"time"
)

func main() {
	// A 1 ms sleep first restarts sysmon's back-off (docs/static.md,
	// "Go's sysmon can move the clock"), so the recording and its replay
	// begin the measured sleep alike whatever the machine's speed: the
	// journal holds the shim's streams, not the supervisor's wait outcomes.
	time.Sleep(time.Millisecond)
	t0 := time.Now()
	fmt.Println("now", t0.UTC().Format(time.RFC3339Nano))
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		fmt.Println("rand:", err)
	}
	fmt.Printf("rand %x\n", b)
	fmt.Println("mrand", mrand.Int63(), mrand.Intn(1000))
	time.Sleep(2 * time.Second)
	fmt.Println("since", time.Since(t0))
	fmt.Println("later", time.Now().UTC().Format(time.RFC3339Nano))
}
