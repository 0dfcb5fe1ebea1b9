// Waits on the run's clock (static.sh): a 20 s sleep that takes no real
// time ("long"), or: time.Since around a 2 s sleep, a goroutine computing
// while another waits on context.WithTimeout(50ms) (it must not time out
// early: time moves only when the run is idle), a ticker; and a wait on
// the world ("net"): Accept on a loopback listener with a 300 ms deadline
// keeps its real deadline, and the run's clock follows it.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	t0 := time.Now()
	if len(os.Args) > 1 && os.Args[1] == "long" {
		time.Sleep(20 * time.Second)
		fmt.Printf("slept %s\n", time.Since(t0).Round(time.Millisecond))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "net" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(2)
		}
		l.(*net.TCPListener).SetDeadline(time.Now().Add(300 * time.Millisecond))
		_, err = l.Accept()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			fmt.Printf("accept: timeout after %s\n", time.Since(t0).Round(100*time.Millisecond))
		} else {
			fmt.Println("accept:", err)
		}
		return
	}
	time.Sleep(2 * time.Second)
	fmt.Printf("slept %s\n", time.Since(t0).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan uint64)
	go func() {
		var x uint64 = 1
		for i := 0; i < 100000000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		done <- x
	}()
	select {
	case <-ctx.Done():
		fmt.Println("compute: timed out early")
	case <-done:
		fmt.Println("compute: finished first")
	}
	t1 := time.Now()
	<-ctx.Done()
	fmt.Printf("then waited %s for the timeout\n", time.Since(t1).Round(time.Millisecond))
	tk := time.NewTicker(100 * time.Millisecond)
	for i := 0; i < 5; i++ {
		<-tk.C
	}
	fmt.Printf("ticks at %s\n", time.Since(t0).Round(time.Millisecond))
}
