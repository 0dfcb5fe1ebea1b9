// The reorder bug with goroutines: setter goroutines store a = 1 then
// b = -1 (and both back to 0); a checker that looks while they run asserts
// it sees (0, 0) or (1, -1). Racing instructions: the setters' two stores and
// the checker's two loads (no call; sync/atomic keeps the compiler from
// merging them, not the race away).
package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

var a, b, bad, finished int32

func main() {
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30000; i++ {
				atomic.StoreInt32(&a, 1)
				atomic.StoreInt32(&b, -1)
				atomic.StoreInt32(&a, 0)
				atomic.StoreInt32(&b, 0)
			}
			atomic.AddInt32(&finished, 1)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k < 200000 && atomic.LoadInt32(&finished) < 3; k++ {
			x, y := atomic.LoadInt32(&a), atomic.LoadInt32(&b)
			if !((x == 0 && y == 0) || (x == 1 && y == -1)) {
				atomic.StoreInt32(&bad, 1)
			}
		}
	}()
	wg.Wait()
	if bad != 0 {
		fmt.Println("checker saw a and b disagree")
		os.Exit(1)
	}
	fmt.Println("checker saw a and b agree")
}
