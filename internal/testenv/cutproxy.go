package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy forwards TCP to a server (PostgreSQL) and can cut every connection at once, as a
// network failure would: the client sees its socket die without any answer from the server.
type CutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// NewCutProxy listens on a loopback port and forwards each connection to target until the test
// ends.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); p.Cut(); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, client, server)
			p.mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(server, client); _ = server.Close() })
			wg.Go(func() { _, _ = io.Copy(client, server); _ = client.Close() })
		}
	})
	return p
}

// Addr is the address clients connect to.
func (p *CutProxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection made so far; new ones are still forwarded.
func (p *CutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// Stop makes the server look gone: new connections are refused (the listener closes) and the
// open ones are cut.
func (p *CutProxy) Stop() {
	_ = p.ln.Close()
	p.Cut()
}
