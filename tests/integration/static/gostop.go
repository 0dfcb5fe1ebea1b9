// What static.sh checks of a supervised child stopped by SIGSTOP (os/exec's
// TestWaitid): the child sleeps (a virtual wait); the parent sleeps 100 ms,
// stops it, sleeps 100 ms, continues and kills it. The stopped child waits
// for SIGCONT, not for the supervisor: the run is idle while the parent
// sleeps, and each sleep takes 100 ms of the run's clock, no lag bound.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		time.Sleep(10 * time.Second)
		return
	}
	cmd := exec.Command(os.Args[0], "child")
	if err := cmd.Start(); err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	t := time.Now()
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Kill()
	cmd.Wait()
	fmt.Printf("slept %v\n", time.Since(t).Round(time.Millisecond))
}
