// Lost update with goroutines: two goroutines increment a shared counter
// without synchronisation. Racing instructions: the load and the store of
// counter++ (no call).
package main

import (
	"fmt"
	"os"
	"sync"
)

var counter int64

func main() {
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000000; i++ {
				counter++
			}
		}()
	}
	wg.Wait()
	fmt.Println("counter", counter, "expected", 2000000)
	if counter != 2000000 {
		os.Exit(1)
	}
}
