package ioc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// MetricsServer serves GET /metrics on a listener of its own (INKWELL_METRICS_ADDR), apart from
// the API's: a balancer that forwards the API port does not expose the metrics, and a scrape
// neither passes the API's middlewares nor counts as an API request.
type MetricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// NewMetricsServer listens on cfg.Telemetry.MetricsAddr at once, so a taken port stops the start rather
// than leaving an instance nobody can scrape; nil (and no listener) when the address is empty.
// The App serves it (Serve) and shuts it down last; the cleanup closes the listener of an App
// that never served.
func NewMetricsServer(cfg *Config, metrics http.Handler) (*MetricsServer, func(), error) {
	if cfg.Telemetry.MetricsAddr == "" {
		return nil, func() {}, nil
	}
	ln, err := net.Listen("tcp", cfg.Telemetry.MetricsAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics listener (INKWELL_METRICS_ADDR): %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	return &MetricsServer{ln: ln, srv: srv}, func() { _ = ln.Close() }, nil
}

// Addr is the address the metrics listener is bound to (with the port chosen for ":0").
func (m *MetricsServer) Addr() string { return m.ln.Addr().String() }

// Serve answers scrapes until Shutdown; it returns nil once shut down.
func (m *MetricsServer) Serve() error {
	if err := m.srv.Serve(m.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the listener and waits for scrapes in progress, within ctx.
func (m *MetricsServer) Shutdown(ctx context.Context) error { return m.srv.Shutdown(ctx) }
