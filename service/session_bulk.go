package service

import (
	"context"
	"sync"
)

// RecordRevoked marks sessions that PostgreSQL has already revoked (a password reset, an account
// takeover) in the revocation cache, and returns once no instance accepts their access tokens,
// like Logout does for one session. The marks are written concurrently, so with Redis down the
// wait is one revocation lease, not one per session.
func (s *SessionService) RecordRevoked(ctx context.Context, sessionIDs []string) {
	var wg sync.WaitGroup
	for _, sid := range sessionIDs {
		wg.Go(func() { s.remember(ctx, sid) })
	}
	wg.Wait()
}
