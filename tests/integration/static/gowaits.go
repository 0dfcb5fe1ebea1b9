// Waits of a supervised Go program on descriptors (static_waits.sh): which
// are the run's and which the world's (engine/supervise_fds.c).
//
//	gowaits file: a 5 s sleep with a /proc/sys file in the poller's set.
//	gowaits outside ADDR: a client of a server outside the run (ADDR, on
//	  loopback), which answers after a while of real time; a goroutine
//	  sleeps 10 s meanwhile. Prints "reply" and "slept" in the order they
//	  came: the run's clock must not jump past the world's answer.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"time"
)

func serve(c net.Conn, d time.Duration) {
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil {
		return
	}
	time.Sleep(d)
	c.Write([]byte("answer\n"))
}

func ask(c net.Conn) (string, time.Duration) {
	t0 := time.Now()
	c.Write([]byte("question\n"))
	s, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err.Error(), time.Since(t0)
	}
	return s[:len(s)-1], time.Since(t0)
}

func file() {
	// A pollable file in the poller's set, as net.Listen's read of this
	// one (os.Open adds it), while main sleeps: a file is always ready,
	// not the world, so the sleep is on the run's clock.
	f, err := os.Open("/proc/sys/net/core/somaxconn")
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	defer f.Close()
	t0 := time.Now()
	time.Sleep(5 * time.Second)
	fmt.Printf("slept %.6f s\n", time.Since(t0).Seconds())
}

func outside(addr string) {
	done := make(chan string, 2)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	go func() {
		time.Sleep(10 * time.Second)
		done <- "slept"
	}()
	go func() {
		s, _ := ask(c)
		done <- "reply " + s
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "outside" {
		outside(os.Args[2])
	} else {
		file()
	}
}
