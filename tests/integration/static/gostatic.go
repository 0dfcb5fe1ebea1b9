// What static.sh checks: the wall clock (time.Now, as the run's --now) and
// crypto/rand (getrandom), statically linked (CGO_ENABLED=0), and the
// descriptors from 3 to 999 it holds (what Go's os/exec tests scan).
package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		fmt.Println("rand:", err)
		os.Exit(2)
	}
	fmt.Printf("now %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Printf("unix %d\n", time.Now().Unix())
	fmt.Printf("rand %x\n", b)
	fmt.Print("fds")
	for fd := 3; fd < 1000; fd++ {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil {
			fmt.Printf(" %d", fd)
		}
	}
	fmt.Println()
}
