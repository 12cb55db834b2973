package inkwell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// App is the running process: the HTTP server, the scheduled jobs and the background workers.
type App struct {
	Server          *http.Server
	Metrics         *ioc.MetricsServer // nil: no metrics listener
	Cron            *cron.Cron
	Workers         Workers
	Rank            *job.RankJob
	Retention       *job.RetentionJob
	Accounts        *service.AccountDeletion   // inkwell users delete
	Moderation      *service.ModerationService // inkwell users role
	Log             *slog.Logger
	ShutdownTimeout time.Duration

	// Drain is what /readyz reports: from the end of Serve's context on, "draining" (503) for
	// DrainDelay while the server still accepts and serves, so the balancer's health check takes
	// the instance out before connections are refused. A nil Drain or a zero delay stops at once.
	Drain      *web.Drain
	DrainDelay time.Duration
	// SkipDrain, closed, ends the drain delay early (a second SIGINT or SIGTERM); nil never does.
	SkipDrain <-chan struct{}

	after func(time.Duration) <-chan time.Time // the drain delay's timer (tests: a channel of theirs)
}

// NewApp assembles the App; c has the scheduled jobs on it (NewScheduler).
func NewApp(cfg *ioc.Config, srv *http.Server, metrics *ioc.MetricsServer, drain *web.Drain, c *cron.Cron, workers Workers, rank *job.RankJob, retention *job.RetentionJob,
	accounts *service.AccountDeletion, moderation *service.ModerationService, log *slog.Logger) *App {
	return &App{Server: srv, Metrics: metrics, Drain: drain, DrainDelay: cfg.Server.DrainDelay, Cron: c, Workers: workers, Rank: rank,
		Retention: retention, Accounts: accounts, Moderation: moderation, Log: log, ShutdownTimeout: cfg.Server.ShutdownTimeout}
}

// stopCron stops the cron and returns what Cron.Stop does; a retention run under way is stopped
// first (after its current statement), so waiting for the running jobs does not wait for a long
// pass to end by itself.
func (a *App) stopCron() context.Context {
	if a.Retention != nil { // nil in an App assembled by hand
		a.Retention.Stop()
	}
	return a.Cron.Stop()
}

// stopRanking gives the ranking lock up once the cron has stopped (no run is going on), so another
// instance takes the ranking over at its next tick rather than when the lease expires.
func (a *App) stopRanking(ctx context.Context) error {
	if a.Rank == nil { // an App assembled by hand, without the job
		return nil
	}
	return a.Rank.Stop(ctx)
}

// Run listens on the configured address and serves until ctx ends.
func (a *App) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.Server.Addr, err)
	}
	return a.Serve(ctx, ln)
}

// Serve serves on ln (and the metrics on their own listener) until ctx ends, then shuts down
// gracefully: drain (readiness 503 for DrainDelay, serving as before), stop accepting, let
// in-flight requests finish, stop the jobs and the workers (after the requests, so events they
// produced are still flushed) and wait for them, then give the ranking lock up, all within
// ShutdownTimeout after the drain; the metrics listener stops last, so scrapes see the whole
// shutdown. Closing the pools is left to the cleanup function that built the App.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	if a.Metrics != nil {
		metricsDone := make(chan error, 1)
		go func() { metricsDone <- a.Metrics.Serve() }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = a.Metrics.Shutdown(sctx)
			if err := <-metricsDone; err != nil {
				a.Log.Error("metrics listener failed", "err", err)
			}
		}()
		a.Log.Info("serving metrics", "addr", a.Metrics.Addr())
	}
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
		<-a.stopCron().Done()
		_ = a.stopRanking(context.Background()) // fails only when its context ends, and this one never does
		stopWorkers()
		<-workersDone
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.drain()
	a.Log.Info("shutting down", "timeout", a.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), a.ShutdownTimeout)
	defer cancel()
	var errs []error
	if err := a.Server.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("drain requests: %w", err))
	}
	stopWorkers()
	select {
	case <-a.stopCron().Done():
	case <-sctx.Done():
		errs = append(errs, errors.New("jobs still running at shutdown deadline"))
	}
	if err := a.stopRanking(sctx); err != nil {
		errs = append(errs, err)
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

// drain makes /readyz answer 503 and keeps serving for DrainDelay (or until SkipDrain), so the
// balancer sees the instance leave before its connections are refused. Keep-alives end meanwhile:
// each connection closes after its next answer, and its client reconnects through the balancer
// to an instance that stays.
func (a *App) drain() {
	if a.Drain == nil || a.DrainDelay <= 0 {
		return
	}
	a.Drain.Start()
	a.Server.SetKeepAlivesEnabled(false)
	a.Log.Info("draining: /readyz answers 503 before the server stops accepting", "delay", a.DrainDelay)
	after := a.after
	if after == nil {
		after = time.After
	}
	select {
	case <-after(a.DrainDelay):
	case <-a.SkipDrain:
		a.Log.Info("drain delay cut short")
	}
}
