package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/url"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Faults is an in-process toxiproxy (used as a library: no HTTP API, nothing outside the test
// process) whose proxies sit between the app and its stores, so a test can inject real network
// faults: latency, resets, a store that is down and comes back.
type Faults struct {
	t      testing.TB
	server *toxiproxy.ApiServer
}

// FaultProxy is one TCP proxy on a free loopback port in front of an upstream address.
type FaultProxy struct {
	t     testing.TB
	proxy *toxiproxy.Proxy
	Addr  string // host:port the app connects to
}

// NewFaults starts an empty toxiproxy. Its proxies stop when the test ends; register it before
// anything that connects through it, so it stops after those have shut down.
func NewFaults(t testing.TB) *Faults {
	t.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	f := &Faults{t: t, server: server}
	t.Cleanup(func() { _ = server.Collection.Clear() })
	return f
}

// Proxy starts a proxy named name to upstream (host:port) on a free loopback port.
func (f *Faults) Proxy(name, upstream string) *FaultProxy {
	f.t.Helper()
	p := toxiproxy.NewProxy(f.server, name, "127.0.0.1:0", upstream)
	if err := f.server.Collection.Add(p, true); err != nil {
		f.t.Fatalf("start proxy %s to %s: %v", name, upstream, err)
	}
	// Start replaced the :0 with the port it bound; Enable listens on the same one again.
	return &FaultProxy{t: f.t, proxy: p, Addr: p.Listen}
}

// PostgresProxy is a proxy to the PostgreSQL of DatabaseURL.
func (f *Faults) PostgresProxy() *FaultProxy {
	f.t.Helper()
	return f.Proxy("postgres", hostPort(f.t, DatabaseURL(), "5432"))
}

// RedisProxy is a proxy to the Redis of RedisURL.
func (f *Faults) RedisProxy() *FaultProxy {
	f.t.Helper()
	return f.Proxy("redis", hostPort(f.t, RedisURL(), "6379"))
}

// Toxic adds a toxic: typ is a toxiproxy toxic type ("latency", "reset_peer", "timeout", ...),
// stream "upstream" (app → store) or "downstream" (store → app), attrs its attributes. It applies
// to open connections and new ones until RemoveToxic.
func (p *FaultProxy) Toxic(name, typ, stream string, attrs map[string]any) {
	p.t.Helper()
	raw, err := json.Marshal(map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs,
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.proxy.Toxics.AddToxicJson(bytes.NewReader(raw)); err != nil {
		p.t.Fatalf("add toxic %s to %s: %v", name, p.proxy.Name, err)
	}
}

// RemoveToxic removes a toxic added by Toxic.
func (p *FaultProxy) RemoveToxic(name string) {
	p.t.Helper()
	if err := p.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
		p.t.Fatalf("remove toxic %s from %s: %v", name, p.proxy.Name, err)
	}
}

// Disable closes the listener and every open connection: from the app's side the store is down
// (new connections are refused) and, once Enable runs, restarted (no old connection survives).
func (p *FaultProxy) Disable() { p.proxy.Stop() }

// Enable listens again on the same port.
func (p *FaultProxy) Enable() {
	p.t.Helper()
	if err := p.proxy.Start(); err != nil {
		p.t.Fatalf("re-enable proxy %s on %s: %v", p.proxy.Name, p.Addr, err)
	}
}

// Rewrite returns rawURL (a postgres:// or redis:// URL) with its host:port replaced by the
// proxy's, everything else (user, database, options) kept.
func (p *FaultProxy) Rewrite(rawURL string) string {
	p.t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		p.t.Fatalf("parse %q: %v", rawURL, err)
	}
	u.Host = p.Addr
	return u.String()
}

func hostPort(t testing.TB, rawURL, defPort string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse %q: %v", rawURL, err)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = defPort
	}
	return net.JoinHostPort(host, port)
}
