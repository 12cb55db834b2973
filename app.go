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
)

// Worker is a long-running background task; Run returns when its context ends.
type Worker interface {
	Run(ctx context.Context) error
}

// Workers are the background tasks the App runs beside the HTTP server.
type Workers []Worker

// App is the running process: the HTTP server, the scheduled jobs and the background workers.
type App struct {
	Server          *http.Server
	Cron            *cron.Cron
	Workers         Workers
	Rank            *job.RankJob
	Retention       *job.RetentionJob
	Accounts        *service.AccountDeletion // inkwell users delete
	Log             *slog.Logger
	ShutdownTimeout time.Duration
}

// NewApp assembles the App; c has the scheduled jobs on it (NewScheduler).
func NewApp(cfg *ioc.Config, srv *http.Server, c *cron.Cron, workers Workers, rank *job.RankJob, retention *job.RetentionJob,
	accounts *service.AccountDeletion, log *slog.Logger) *App {
	return &App{Server: srv, Cron: c, Workers: workers, Rank: rank, Retention: retention, Accounts: accounts, Log: log, ShutdownTimeout: cfg.ShutdownTimeout}
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

// Serve serves on ln until ctx ends, then shuts down gracefully: stop accepting, let in-flight
// requests finish, stop the jobs and the workers (after the requests, so events they produced are
// still flushed) and wait for them, then give the ranking lock up, all within ShutdownTimeout. Closing the pools is left to the
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
		<-a.stopCron().Done()
		_ = a.stopRanking(context.Background()) // fails only when its context ends, and this one never does
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
