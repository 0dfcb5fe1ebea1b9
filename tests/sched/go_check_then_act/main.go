// Check-then-act with goroutines: a registry guarded per operation by a
// mutex, but "look up, then insert" is two operations; a name registered
// twice is the bug.
package main

import (
	"fmt"
	"os"
	"sync"
)

var (
	mu      sync.Mutex
	reg     = map[int]int{}
	created int
	cmu     sync.Mutex
)

func has(k int) bool { mu.Lock(); defer mu.Unlock(); _, ok := reg[k]; return ok }
func put(k, v int)   { mu.Lock(); defer mu.Unlock(); reg[k] = v }

func main() {
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20000; k++ {
				if !has(k) {
					cmu.Lock()
					created++
					cmu.Unlock()
					put(k, k)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("created", created, "for", len(reg))
	if created != len(reg) {
		os.Exit(1)
	}
}
