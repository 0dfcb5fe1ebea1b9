// A goroutine must not wait for a blocking system call of another to end
// when the run is busy (static_waits.sh): with GOMAXPROCS 1, main blocks in
// read(2) on a pipe whose writer, a child, computes 0.3 s of CPU time
// before writing; goroutine B is ready meanwhile. Go's sysmon takes the
// processor back from the thread in the system call after a sleep of 20 us
// to 10 ms, so B runs first: prints "B", then "A" (bare: always). If sysmon's sleep waits
// for the run's clock while the child computes, "A" comes first.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// spin computes until the process has used us microseconds of CPU time.
func spin(us int64) {
	var ru syscall.Rusage
	for {
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			os.Exit(2)
		}
		if ru.Utime.Sec*1000000+ru.Utime.Usec+ru.Stime.Sec*1000000+ru.Stime.Usec >= us {
			return
		}
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "spin" {
		spin(300000)
		syscall.Write(3, []byte("x"))
		return
	}
	runtime.GOMAXPROCS(1)
	// 30 ms of computing first: sysmon, finding nothing to do, has backed
	// off past 100 us (its sleeps of 100 us or less end at once).
	spin(30000)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Println("pipe:", err)
		os.Exit(1)
	}
	cmd := exec.Command(os.Args[0], "spin")
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(p[1]), "w")}
	if err := cmd.Start(); err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	syscall.Close(p[1])
	done := make(chan bool)
	go func() {
		fmt.Println("B")
		done <- true
	}()
	buf := make([]byte, 1)
	syscall.Read(p[0], buf) // blocking: the fd is not the poller's
	fmt.Println("A")
	<-done
	cmd.Wait()
}
