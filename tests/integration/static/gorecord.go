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
