// Flaky by machine: a work split that keeps one CPU for the coordinator
// and divides the rest among workers divides by zero on a one-CPU runner.
// Go reads the CPU count from the kernel (sched_getaffinity), so this is
// the run's real affinity. hermetic hunt --vary identity names the cause
// "identity (cpus)".
package main

import (
	"fmt"
	"runtime"
)

func main() {
	items := 100
	workers := runtime.NumCPU() - 1
	defer func() {
		if r := recover(); r != nil {
			fmt.Println("split failed:", r)
			panic(r)
		}
	}()
	fmt.Println("per worker:", items/workers)
}
