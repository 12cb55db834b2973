// Command loadgen is inkwell's benchmark tool. It is not part of the server: scripts/bench.sh
// (`make bench`) builds it next to bin/inkwell and drives it. It has six modes:
//
//	loadgen seed      [flags]             fill a running inkwell through its public API
//	loadgen ceiling   [flags]             serve GET /ceiling with bare gin (the machine's ceiling)
//	loadgen run       [flags] TARGET...   measure each target in turn with a closed-loop generator
//	loadgen propagate [flags]             time until an edit on one instance shows on another
//	loadgen pages     [flags]             print the URL of page N of a cursor-paged list
//	loadgen scale     [flags]             compare two runs' JSON (small and large data) against goals
//
// A target is NAME=URL (anonymous GETs) or "NAME=METHOD[+METHOD...] URL" (writes: each worker
// cycles through the methods as its own user, with a token from the file `loadgen seed -writers`
// writes).
//
// All traffic goes to loopback only: every URL and listen address must be 127.0.0.1, ::1 or
// localhost, and concurrency, duration and target count are capped, so a typo cannot turn it into
// a load generator against another machine or an unbounded run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

const usage = `loadgen — inkwell's benchmark tool (loopback only)

Usage:
  loadgen seed    [flags]              fill a running inkwell through its public API
  loadgen ceiling [flags]              serve GET /ceiling with bare gin (no middleware)
  loadgen run     [flags] TARGET...    measure each target in turn (closed loop, C workers, D seconds);
                                       TARGET is NAME=URL (GET) or 'NAME=POST+DELETE URL' (writes)
  loadgen propagate [flags]            edit an article on one instance N times and time until each
                                       edit shows on another (p50/p99/max), under a steady read load
  loadgen pages   -url URL -n N        follow nextCursor from a list's first page to page N; print its URL
  loadgen scale   -small F -large F    the same rows measured on small and large data: ratios, goals
  loadgen upload  -base URL -tokens F  photo-like JPEG uploads: p50, server CPU per upload, memory

Run 'loadgen MODE -h' for the flags of a mode.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch mode, args := os.Args[1], os.Args[2:]; mode {
	case "seed":
		err = seedMain(args)
	case "ceiling":
		err = ceilingMain(args)
	case "run":
		err = runMain(args)
	case "propagate":
		err = propagateMain(args)
	case "pages":
		err = pagesMain(args)
	case "scale":
		err = scaleMain(args)
	case "upload":
		err = uploadMain(args)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprint(os.Stderr, usage)
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// isLoopbackHost reports whether host (no port) is a loopback address or "localhost".
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkLoopbackURL parses raw and refuses anything but http:// on a loopback host.
func checkLoopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("URL %q: only http:// is supported", raw)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("URL %q: refusing a non-loopback host (load stays on 127.0.0.1)", raw)
	}
	return u, nil
}

// checkLoopbackAddr refuses a listen address that is not on a loopback host.
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad address %q: %w", addr, err)
	}
	if !isLoopbackHost(host) {
		return fmt.Errorf("address %q: refusing to listen beyond loopback (use 127.0.0.1:PORT)", addr)
	}
	return nil
}
