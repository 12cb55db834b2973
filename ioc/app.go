package ioc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/web"
)

// NewRouterConfig returns the router's settings.
func NewRouterConfig(cfg *Config) web.RouterConfig {
	rc := web.RouterConfig{MaxBodyBytes: cfg.MaxBodyBytes}
	for _, o := range strings.Split(cfg.CORSOrigins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o == "*" {
			rc.CORS.AllowAll = true
		} else if o != "" {
			rc.CORS.Origins = append(rc.CORS.Origins, o)
		}
	}
	if cfg.CORSOrigins == "" && cfg.Env == "dev" {
		rc.CORS.AllowAll = true
	}
	n, w, _ := ParseRate(cfg.RateAuth)
	rc.RateLimits.Auth = web.RateRule{Name: "auth", Limit: n, Window: w}
	n, w, _ = ParseRate(cfg.RateWrites)
	rc.RateLimits.Writes = web.RateRule{Name: "writes", Limit: n, Window: w}
	for _, p := range strings.Split(cfg.TrustedProxies, ",") {
		if p = strings.TrimSpace(p); p != "" {
			rc.TrustedProxies = append(rc.TrustedProxies, p)
		}
	}
	return rc
}

// NewHTTPServer returns the HTTP server around the router, with timeouts that stop slow clients
// from holding connections forever.
func NewHTTPServer(cfg *Config, engine *gin.Engine) *http.Server {
	return &http.Server{
		Addr:              cfg.Addr,
		Handler:           engine,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// App is the running process: the HTTP server, the scheduled jobs and the background workers.
type App struct {
	Server          *http.Server
	Cron            *cron.Cron
	Workers         Workers
	Rank            *job.RankJob
	Log             *slog.Logger
	ShutdownTimeout time.Duration
}

// NewApp assembles the App.
func NewApp(cfg *Config, srv *http.Server, c *cron.Cron, _ CronJobs, workers Workers, rank *job.RankJob, log *slog.Logger) *App {
	return &App{Server: srv, Cron: c, Workers: workers, Rank: rank, Log: log, ShutdownTimeout: cfg.ShutdownTimeout}
}

// Run listens on the configured address and serves until ctx ends.
func (a *App) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.Server.Addr, err)
	}
	return a.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: stop accepting, let in-flight
// requests finish, stop the jobs and the workers (after the requests, so events they produced are
// still flushed) and wait for them, all within ShutdownTimeout. Closing the pools is left to the
// cleanup function that built the App.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	var workers sync.WaitGroup
	for _, w := range a.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := w.Run(wctx); err != nil {
				a.Log.Error("background worker stopped", "worker", fmt.Sprintf("%T", w), "err", err)
			}
		}()
	}
	workersDone := make(chan struct{})
	go func() { workers.Wait(); close(workersDone) }()

	a.Cron.Start()
	errc := make(chan error, 1)
	go func() { errc <- a.Server.Serve(ln) }()
	a.Log.Info("serving", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		<-a.Cron.Stop().Done()
		stopWorkers()
		<-workersDone
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.Log.Info("shutting down", "timeout", a.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), a.ShutdownTimeout)
	defer cancel()
	var errs []error
	if err := a.Server.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("drain requests: %w", err))
	}
	stopWorkers()
	select {
	case <-a.Cron.Stop().Done():
	case <-sctx.Done():
		errs = append(errs, errors.New("jobs still running at shutdown deadline"))
	}
	select {
	case <-workersDone:
	case <-sctx.Done():
		errs = append(errs, errors.New("background workers still running at shutdown deadline"))
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	a.Log.Info("stopped")
	return errors.Join(errs...)
}
