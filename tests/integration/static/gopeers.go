// Waits of a supervised Go program on sockets (static_peers.sh): which are
// the run's and which the world's (engine/supervise_peers.c).
//
//	gopeers inproc: a TCP server and client in this process on loopback, and
//	  a unix socket pair: the server answers after a 5 s sleep; the client
//	  waits on its socket meanwhile (with a /proc/sys file open in the
//	  poller's set). Prints how long each answer took.
//	gopeers outside ADDR: a client of a server outside the run (ADDR, on
//	  loopback), which answers after a while of real time; a goroutine
//	  sleeps 10 s meanwhile. Prints "reply" and "slept" in the order they
//	  came: the run's clock must not jump past the world's answer.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"syscall"
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

func inproc() {
	// A pollable file in the poller's set meanwhile, as net.Listen's read
	// of this one (os.Open adds it): a file is always ready, not the world.
	f, err := os.Open("/proc/sys/net/core/somaxconn")
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	defer f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			serve(c, 5*time.Second)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	s, d := ask(c)
	fmt.Printf("tcp %s after %.6f s\n", s, d.Seconds())
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("socketpair:", err)
		os.Exit(1)
	}
	a, _ := net.FileConn(os.NewFile(uintptr(fds[0]), "a"))
	b, _ := net.FileConn(os.NewFile(uintptr(fds[1]), "b"))
	go serve(b, 3*time.Second)
	s, d = ask(a)
	fmt.Printf("unix %s after %.6f s\n", s, d.Seconds())
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
		inproc()
	}
}
