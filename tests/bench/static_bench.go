// static-bench.sh: MODE N does N time.Now() calls ("now"), N 16-byte
// crypto/rand reads ("rand", getrandom: answered by the supervisor when
// enrolled) or N 1 ms sleeps ("sleep", virtual when enrolled). The bench
// times it from outside: enrolled, the program's own clock is the run's.
package main

import (
	"crypto/rand"
	"os"
	"strconv"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	var sink int64
	b := make([]byte, 16)
	for i := 0; i < n; i++ {
		switch os.Args[1] {
		case "now":
			sink += time.Now().UnixNano()
		case "rand":
			rand.Read(b)
		case "sleep":
			time.Sleep(time.Millisecond)
		}
	}
	if sink == 42 {
		os.Exit(3)
	}
}
