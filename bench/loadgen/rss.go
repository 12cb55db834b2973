package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// readRSS returns a process's resident set size now (VmRSS) and its peak so far (VmHWM), in KiB,
// from /proc/PID/status (Linux only).
func readRSS(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return parseStatusRSS(f)
}

// parseStatusRSS reads the "VmRSS:  1234 kB" and "VmHWM:  2345 kB" lines of a /proc status file.
func parseStatusRSS(r io.Reader) (rss, peak int64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("%s: unexpected %q", key, rest)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("%s: unexpected %q", key, rest)
		}
		if key == "VmRSS" {
			rss = n
		} else {
			peak = n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("no VmRSS line (a kernel thread, or a process that has exited?)")
	}
	return rss, peak, nil
}
