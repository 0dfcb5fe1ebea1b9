// Flaky by date: a "same day next year" that assumes every date exists a
// year later fails on Feb 29. hermetic hunt names the cause "date/time".
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	now := time.Now()
	next := now.AddDate(1, 0, 0)
	if next.Day() != now.Day() {
		fmt.Fprintf(os.Stderr, "anniversary of %s moved to %s\n", now.Format("2006-01-02"), next.Format("2006-01-02"))
		os.Exit(1)
	}
	fmt.Println("ok")
}
