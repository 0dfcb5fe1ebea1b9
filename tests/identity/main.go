// SPDX-License-Identifier: MIT
// What a Go program learns about the machine (tests/identity/probe.c's
// lines where Go has the path), built static: no shim, the kernel only.
// os.Args[1], if given, is a directory to list.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func first(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "-"
	}
	return strings.SplitN(string(b), "\n", 2)[0]
}

func count(p, k string) string {
	f, err := os.Open(p)
	if err != nil {
		return "-"
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), k) {
			n++
		}
	}
	return fmt.Sprint(n)
}

func main() {
	fmt.Println("cpus.affinity", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Println("cpus.cpuinfo", count("/proc/cpuinfo", "processor"))
	fmt.Println("cpus.stat", count("/proc/stat", "cpu"))
	fmt.Println("cpus.online", first("/sys/devices/system/cpu/online"))
	var u syscall.Utsname
	syscall.Uname(&u)
	rel := ""
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel += string(rune(c))
	}
	fmt.Println("host.release", rel)
	h, _ := os.Hostname()
	fmt.Println("host.gethostname", h)
	fmt.Println("host.proc", first("/proc/sys/kernel/hostname"))
	fmt.Println("tz", time.Unix(1700000000, 0).Format("15:04 -0700"))
	m := syscall.Umask(0)
	syscall.Umask(m)
	fmt.Printf("umask %04o\n", m)
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	fmt.Println("nofile.hard", rl.Max)
	var si syscall.Sysinfo_t
	syscall.Sysinfo(&si)
	fmt.Println("memory.sysinfo", si.Totalram*uint64(si.Unit)/(1<<20))
	fmt.Println("memory.meminfo", first("/proc/meminfo"))
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err == nil {
			names, _ := f.Readdirnames(-1)
			var keep []string
			for _, n := range names {
				if !strings.HasPrefix(n, ".") {
					keep = append(keep, n)
				}
			}
			fmt.Println("dir " + strings.Join(keep, " "))
		}
	}
}
