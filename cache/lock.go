package cache

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/lock_release.lua
var lockReleaseSrc string

//go:embed lua/lock_renew.lua
var lockRenewSrc string

var (
	lockRelease = redis.NewScript(lockReleaseSrc)
	lockRenew   = redis.NewScript(lockRenewSrc)
)

// ErrLockLost means the lock expired or was taken over: its holder must stop acting as the holder.
var ErrLockLost = errors.New("lock lost")

// Locker takes named mutual-exclusion locks in Redis: SET NX PX with a random token, released and
// renewed by scripts that check the token. Its keys live under the keyspace.
type Locker struct {
	rdb redis.UniversalClient
	ks  Keyspace
}

// NewLocker returns a Locker.
func NewLocker(rdb redis.UniversalClient, ks Keyspace) *Locker { return &Locker{rdb: rdb, ks: ks} }

// Lock is one holding of a named lock.
type Lock struct {
	rdb   redis.UniversalClient
	key   string
	token string
	ttl   time.Duration
}

// TryLock takes the lock name for ttl. ok is false (with a nil error) when someone else holds it.
func (l *Locker) TryLock(ctx context.Context, name string, ttl time.Duration) (*Lock, bool, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, false, err
	}
	lk := &Lock{rdb: l.rdb, key: l.ks.Key("lock", name), token: hex.EncodeToString(b[:]), ttl: ttl}
	ok, err := l.rdb.SetNX(ctx, lk.key, lk.token, ttl).Result()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return lk, true, nil
}

// Renew extends the lock to its full ttl again; ErrLockLost if it is no longer ours.
func (lk *Lock) Renew(ctx context.Context) error {
	n, err := lockRenew.Run(ctx, lk.rdb, []string{lk.key}, lk.token, lk.ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("renew lock: %w", err)
	}
	if n == 0 {
		return ErrLockLost
	}
	return nil
}

// Release gives the lock up if it is still ours; releasing a lost lock is a no-op reported as
// ErrLockLost.
func (lk *Lock) Release(ctx context.Context) error {
	n, err := lockRelease.Run(ctx, lk.rdb, []string{lk.key}, lk.token).Int()
	if err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	if n == 0 {
		return ErrLockLost
	}
	return nil
}

// TTL is the lock's lease length.
func (lk *Lock) TTL() time.Duration { return lk.ttl }
