// What static.sh checks: the wall clock (time.Now, as the run's --now) and
// crypto/rand (getrandom), statically linked (CGO_ENABLED=0).
package main

import (
	"crypto/rand"
	"fmt"
	"os"
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
}
