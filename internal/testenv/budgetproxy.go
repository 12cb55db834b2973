package testenv

import (
	"context"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// slotWait bounds how long a proxied connection waits for a slot of the budget: past it the
// connection is closed, which its client sees as a failed connection attempt.
const slotWait = time.Minute

// BudgetProxy serves databaseURL's PostgreSQL server on a loopback port until the test ends, each
// connection through it holding one slot of the machine-wide test budget (see connbudget.go) from
// before it reaches the server until it closes; it returns databaseURL pointed at the proxy. It is
// for processes the test starts (another binary's pools cannot take slots themselves), so their
// connections count in the budget as in-process pools' do.
func BudgetProxy(t testing.TB, databaseURL string) string {
	t.Helper()
	return budgetProxy(t, databaseURL, budget)
}

func budgetProxy(t testing.TB, databaseURL string, budget func() (*connBudget, error)) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("budget proxy: %v", err)
	}
	network, upstream := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if len(cfg.Host) > 0 && cfg.Host[0] == '/' { // a Unix socket directory
		network, upstream = "unix", cfg.Host+"/.s.PGSQL."+strconv.Itoa(int(cfg.Port))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("budget proxy: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var conns sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		conns.Wait()
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return // closed by the cleanup
			}
			conns.Go(func() { proxyConn(ctx, client, network, upstream, budget) })
		}
	}()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatalf("budget proxy: %v", err)
	}
	q := u.Query()
	q.Del("host") // a host parameter would win over the URL's host
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = ln.Addr().String()
	return u.String()
}

// proxyConn takes a slot, connects client to the server and copies both ways until either side
// closes (or ctx ends), then frees the slot.
func proxyConn(ctx context.Context, client net.Conn, network, upstream string, budget func() (*connBudget, error)) {
	defer client.Close()
	b, err := budget()
	if err != nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, slotWait)
	slot, err := b.acquire(wctx)
	cancel()
	if err != nil {
		return
	}
	defer slot.Close()
	server, err := (&net.Dialer{}).DialContext(ctx, network, upstream)
	if err != nil {
		return
	}
	defer server.Close()
	stop := context.AfterFunc(ctx, func() { _ = client.Close(); _ = server.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// One side ended: end the other, so the other copy returns too.
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
}
