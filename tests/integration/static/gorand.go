// What static.sh checks of Go's getrandom served in the process
// (docs/static.md, "Entropy"): crypto/rand's bytes; 1,000 reads from 8
// goroutines at once, none repeated; a 100,000-byte read after them (the
// same bytes every run: the calls' total is fixed, whatever their order);
// Go's own GetRandom with flags the kernel refuses (EINVAL, as Go's error
// value); and a raw getrandom (the supervisor's stream for the process:
// none of the bytes read in the process).
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"sync"
	"syscall"
	"unsafe"
)

//go:linkname getRandom internal/syscall/unix.GetRandom
func getRandom(p []byte, flags uintptr) (n int, err error)

func main() {
	b := make([]byte, 16)
	rand.Read(b)
	fmt.Printf("rand %x\n", b)

	var mu sync.Mutex
	var wg sync.WaitGroup
	seen, dup := map[string]bool{}, 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 125; i++ {
				x := make([]byte, 24)
				rand.Read(x)
				mu.Lock()
				if seen[string(x)] {
					dup++
				}
				seen[string(x)] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("reads %d dup %d\n", len(seen), dup)

	big := make([]byte, 100000)
	rand.Read(big)
	fmt.Printf("big %x\n", sha256.Sum256(big))

	n, err := getRandom(make([]byte, 8), 0x100)
	fmt.Printf("badflags %d %v %v\n", n, err, err == syscall.EINVAL)

	raw := make([]byte, 16)
	r1, _, e := syscall.Syscall(318 /* getrandom */, uintptr(unsafe.Pointer(&raw[0])), 16, 0)
	fmt.Printf("raw %d %d %x\n", r1, e, raw)
}
