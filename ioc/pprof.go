package ioc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// PprofServer serves /debug/pprof on a separate, loopback-only listener when enabled, so
// profiling is never reachable through the public port. Config.Validate refuses any other address.
type PprofServer struct {
	addr string
	log  *slog.Logger
}

// NewPprofServer returns the server for addr; Run serves until its context ends.
func NewPprofServer(addr string, log *slog.Logger) PprofServer {
	return PprofServer{addr: addr, log: log}
}

// validatePprofAddr refuses any address that is not on the loopback interface.
func validatePprofAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("INKWELL_PPROF_ADDR %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("INKWELL_PPROF_ADDR %q must be a loopback address such as 127.0.0.1:6060", addr)
	}
	return nil
}

func (p PprofServer) Run(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: p.addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	p.log.Info("pprof listening", "addr", p.addr)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("pprof listener failed", "err", err)
		}
		return nil
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
