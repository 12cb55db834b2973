package testenv_test

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestTogether_RunsEveryCallAtOnce: each call waits for all the others to have started, which only
// returns if Together really runs them side by side.
func TestTogether_RunsEveryCallAtOnce(t *testing.T) {
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	var ran atomic.Int64
	testenv.Together(n, func(int) {
		started.Done()
		started.Wait()
		ran.Add(1)
	})
	if got := ran.Load(); got != n {
		t.Fatalf("%d calls returned, want %d", got, n)
	}
}

func TestCutProxy_ForwardsUntilCut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	proxy := testenv.NewCutProxy(t, ln.Addr().String())
	c, err := net.Dial("tcp", proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := bufio.NewReader(c)
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo through the proxy = %q, %v", line, err)
	}
	proxy.Cut()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("the connection still answers after Cut")
	}
}
