// The same as gostatic.go with cgo: dynamically linked, the shim loaded,
// but the Go runtime still reads the vDSO and calls getrandom itself.
package main

// #include <stdlib.h>
// static int twice(int x) { return 2 * x; }
import "C"

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
	fmt.Printf("cgo %d\n", int(C.twice(21)))
}
