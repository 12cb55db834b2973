package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// How a revoked session reaches every instance before the revocation is answered.
//
// PostgreSQL is the truth; Redis holds a mark per revoked session, and an instance trusts
// Redis's "no mark" only while the lease (RevocationCache) is held. Every instance renews the
// lease (RenewRevocations, run by job.RevocationLease): it takes the cache's clock, reads from
// PostgreSQL the revocations committed lately, writes their marks and extends the lease to that
// clock reading plus RevocationLease. So whoever trusts a lease trusts a renewal that read
// PostgreSQL no earlier than RevocationLease ago.
//
// A revocation writes its own mark right after the commit. If that fails, a lease granted
// before the commit may still be trusted elsewhere, and its renewal could not have seen the
// revocation; so remember keeps retrying and, failing that, answers only once every such lease
// has ended. By then any lease in force began after the commit: it has the mark.

// leaseSlack is added to the wait for the lease: Redis ends the lease by its own clock, whose
// rate may differ from ours a little (NTP slews at most 0.05 %), and a millisecond is lost to
// rounding.
const leaseSlack = 100 * time.Millisecond

// Retries of a revocation's Redis mark back off from the first pause to the last.
const (
	markRetryFirst = 50 * time.Millisecond
	markRetryLast  = time.Second
)

// ErrLeaseLate is a lease renewal that took longer than the lease: nothing was granted.
var ErrLeaseLate = errors.New("revocation lease renewal slower than the lease")

// remember records a revocation that PostgreSQL has committed in Redis for the lifetime of its
// access tokens, and returns once no instance can accept those tokens any more (see above).
// A request that is given up (its context ends) stops waiting: no answer is waiting for it.
func (s *SessionService) remember(ctx context.Context, sid string) {
	safe := s.now().Add(s.cfg.RevocationLease + leaseSlack)
	pause := markRetryFirst
	for attempt := 1; ; attempt++ {
		err := s.revoked.Revoke(context.WithoutCancel(ctx), sid, s.markTTL())
		if err == nil {
			if attempt > 1 {
				s.log.InfoContext(ctx, "revocation reached Redis on a retry", "session", sid, "attempts", attempt)
			}
			return
		}
		left := safe.Sub(s.now())
		if attempt == 1 {
			s.Stats.RevocationsDelayed.Add(1)
			s.log.WarnContext(ctx, "revocation cache write failed; PostgreSQL has it. Retrying, and answering at the latest when every instance's revocation lease has been renewed from PostgreSQL",
				"session", sid, "wait", left, "err", err)
		}
		if left <= 0 {
			s.Stats.RevocationsUnmarked.Add(1)
			return
		}
		select {
		case <-s.after(min(pause, left)):
		case <-ctx.Done():
			return
		}
		pause = min(2*pause, markRetryLast)
	}
}

// markTTL is how long a revocation's Redis mark lives: as long as the revocation matters (see
// revocationWindow), so a token issued just before the revocation is refused until the token
// check itself refuses it, clock skew included. A mark that lived exactly AccessTTL let a logged-out
// token back in for the skew the check allows near its expiry.
func (s *SessionService) markTTL() time.Duration { return s.revocationWindow() }

// rememberAll is remember for many sessions at once (log out everywhere, a password change): each
// gets its mark, a few at a time, and the call returns once every one is in force.
func (s *SessionService) rememberAll(ctx context.Context, sids []string) {
	const parallel = 8
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, sid := range sids {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.remember(ctx, sid)
		}()
	}
	wg.Wait()
}

// revocationWindow is how far back a revocation still matters: a token issued just before it
// lives AccessTTL (plus the clock skew the token check allows, and a margin).
func (s *SessionService) revocationWindow() time.Duration { return s.cfg.AccessTTL + time.Minute }

// RenewRevocations copies the revocations committed lately from PostgreSQL into Redis and
// extends the lease; when the lease is gone, it copies every revocation that still matters and
// starts the lease again. ErrLeaseLate: the renewal took longer than the lease.
func (s *SessionService) RenewRevocations(ctx context.Context) error {
	held, start, err := s.revoked.BeginRenewal(ctx)
	if err != nil {
		return err
	}
	granted, err := s.copyRevocations(ctx, start, held)
	if err == nil && !granted && held {
		// The lease ended while this renewal ran (or Redis restarted empty): recent marks alone
		// cannot start it again, everything can. start still precedes the read.
		held = false
		granted, err = s.copyRevocations(ctx, start, false)
	}
	if err != nil {
		return err
	}
	if !granted {
		return fmt.Errorf("%w (%s)", ErrLeaseLate, s.cfg.RevocationLease)
	}
	if !held {
		s.log.InfoContext(ctx, "revocation cache refilled from PostgreSQL; lease started")
	}
	return nil
}

// copyRevocations reads the revocations of the last RecentRevocations (recentOnly) or of the
// whole revocation window from PostgreSQL and grants them with the lease from start.
func (s *SessionService) copyRevocations(ctx context.Context, start time.Time, recentOnly bool) (bool, error) {
	within := s.revocationWindow()
	if recentOnly {
		within = s.cfg.RecentRevocations
	}
	ids, err := s.repo.RevokedWithin(ctx, within)
	if err != nil {
		return false, err
	}
	return s.revoked.Grant(ctx, ids, s.revocationWindow(), start.Add(s.cfg.RevocationLease), recentOnly)
}

// RenewalRequests delivers a value when a request found the lease gone while Redis answered, so
// the renewer need not wait for its next turn.
func (s *SessionService) RenewalRequests() <-chan struct{} { return s.renewNow }

func (s *SessionService) requestRenewal() {
	select {
	case s.renewNow <- struct{}{}:
	default: // one is pending already
	}
}
