package cache

import "time"

// Tuning constants of the caches (settings until 0.1.0; tests that need another value set it on
// the Policy, CodePolicy or BreakerConfig they build).
const (
	// TTL bounds how long an entry lives in Redis: every write invalidates its entries, so this
	// only limits memory held by entries nobody reads, and a copy whose invalidation was lost.
	TTL = 10 * time.Minute
	// TTLJitter spreads the expiry of entries filled together (a deploy, a warm-up) so that they
	// do not all miss at the same moment.
	TTLJitter = 2 * time.Minute
	// NullTTL is short: a "does not exist" marker only has to absorb a burst of misses for one
	// key, and a short life keeps a just-created row from being hidden long if an invalidation
	// is lost.
	NullTTL = 30 * time.Second
	// LoadTimeout bounds one cache-miss load from PostgreSQL, well below the request deadline so
	// that a slow load fails the waiters of its flight rather than the requests themselves.
	LoadTimeout = 3 * time.Second

	// FallbackWait is how long a read waits for a PostgreSQL slot while Redis fails: a tenth of a
	// second is longer than one load takes, and short enough that a client retries (Retry-After:
	// 1) rather than piling up. FallbackConcurrency is 0: half the pool's connections (see
	// NewFallbackLimit's caller), so writes and uncached reads keep the other half.
	FallbackWait        = 100 * time.Millisecond
	FallbackConcurrency = 0

	// BreakerFailures: five timeouts or refused connections in a row tell a Redis that is down
	// from one slow command, at ~300 ms each (the read timeout) within two seconds.
	BreakerFailures = 5
	// BreakerOpenFor is how long an open breaker fails Redis calls fast (served from PostgreSQL)
	// before one probe tries Redis again: a second is long enough to stop paying a timeout per
	// call, short enough that a Redis back up is used again at once.
	BreakerOpenFor = time.Second

	// LocalTTL bounds an in-process copy of a hot user or article entry in front of Redis. Other
	// instances' writes drop it at once through the invalidation channel; this only bounds a copy
	// whose change was not broadcast.
	LocalTTL = 2 * time.Second
)

// Login-code policy (see CodePolicy): one code is valid for an operator-set time (a setting); the
// budgets below stop guessing and SMS pumping and are not a deployment's choice.
const (
	CodeResend        = time.Minute    // one send per target a minute: a user waiting for a lost code retries within it
	CodeAttempts      = 3              // wrong tries per code: 3 in a million for a six-digit code
	CodeFailureBudget = 10             // wrong tries per target per CodeBudgetWindow, across codes
	CodeDailySends    = 10             // sends per client IP and target per CodeBudgetWindow
	CodeBudgetWindow  = 24 * time.Hour // a day: what a real user needs, far less than an attacker
	CodeGlobalSends   = 600            // sends to anyone per CodeGlobalWindow: ten a second caps an SMS bill
	CodeGlobalWindow  = time.Minute
)
