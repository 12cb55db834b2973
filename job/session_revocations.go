package job

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// RevocationKeeper renews the lease under which Redis's "not revoked" is trusted
// (service.SessionService).
type RevocationKeeper interface {
	RenewRevocations(ctx context.Context) error
	// RenewalRequests delivers a value when a request found the lease gone.
	RenewalRequests() <-chan struct{}
}

// RevocationRenewerConfig paces a RevocationRenewer.
type RevocationRenewerConfig struct {
	Every   time.Duration // between renewals: a third of the lease, so two in a row may fail before it lapses
	Timeout time.Duration // bound of one renewal, its PostgreSQL read and its Redis calls
}

// RevocationRenewer renews the revocation lease every turn, at once when a request asks, from
// Run's start until its context ends. Every instance runs one; any one succeeding keeps the lease
// for all. A failing renewal is logged when renewals start failing and when they work again,
// not every turn; while they fail, requests do not hurry it (they would only hammer a failing
// store).
type RevocationRenewer struct {
	keeper RevocationKeeper
	cfg    RevocationRenewerConfig
	after  func(time.Duration) <-chan time.Time
	log    *slog.Logger

	Stats RevocationRenewerStats
}

// RevocationRenewerStats counts renewals. Failing is this instance's state, not the lease's.
type RevocationRenewerStats struct {
	Renewed atomic.Int64
	Failed  atomic.Int64
	Failing atomic.Bool // the last renewal failed
}

// NewRevocationRenewer returns the renewer; after is the clock's wait (time.After).
func NewRevocationRenewer(keeper RevocationKeeper, cfg RevocationRenewerConfig, after func(time.Duration) <-chan time.Time, log *slog.Logger) *RevocationRenewer {
	return &RevocationRenewer{keeper: keeper, cfg: cfg, after: after, log: log}
}

// Run renews until ctx ends, then returns nil.
func (r *RevocationRenewer) Run(ctx context.Context) error {
	for {
		r.renew(ctx)
		var asked <-chan struct{}
		if !r.Stats.Failing.Load() {
			asked = r.keeper.RenewalRequests()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.after(r.cfg.Every):
		case <-asked:
		}
	}
}

func (r *RevocationRenewer) renew(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	err := r.keeper.RenewRevocations(rctx)
	cancel()
	if ctx.Err() != nil {
		return // stopping: not a failure of the lease
	}
	if err != nil {
		r.Stats.Failed.Add(1)
		if !r.Stats.Failing.Swap(true) {
			r.log.Warn("revocation lease could not be renewed from here; if no instance can, every instance checks access tokens in PostgreSQL", "err", err)
		}
		return
	}
	r.Stats.Renewed.Add(1)
	if r.Stats.Failing.Swap(false) {
		r.log.Info("revocation lease renewed again")
	}
}
