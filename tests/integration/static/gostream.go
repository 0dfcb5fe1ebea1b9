// gostream: a Go program that streams to itself over loopback until a
// 100 ms socket deadline, as net/http's TestIssue4191_InfiniteGetTimeout
// does (tests/integration/static_lag.sh). The run is busy all along: only
// the lag bound moves its clock, through the system monitor's sleeps.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4096)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	start := time.Now()
	c.SetDeadline(start.Add(100 * time.Millisecond))
	_, err = io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	fmt.Printf("deadline %v after %d ms\n", ok && ne.Timeout(), time.Since(start).Milliseconds())
}
