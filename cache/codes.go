package cache

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed lua/code_send.lua
var codeSendSrc string

//go:embed lua/code_verify.lua
var codeVerifySrc string

//go:embed lua/code_withdraw.lua
var codeWithdrawSrc string

var (
	codeSend     = redis.NewScript(codeSendSrc)
	codeVerify   = redis.NewScript(codeVerifySrc)
	codeWithdraw = redis.NewScript(codeWithdrawSrc)
)

// CodePolicy is the one-time code policy.
type CodePolicy struct {
	Validity time.Duration // 10 minutes
	Resend   time.Duration // at most one code per minute
	Attempts int           // wrong guesses allowed before the code burns
}

// CodeStore keeps one-time login codes in Redis; every check-and-change is one Lua script.
type CodeStore struct {
	rdb    redis.UniversalClient
	ks     Keyspace
	policy CodePolicy
}

// NewCodeStore returns the store.
func NewCodeStore(rdb redis.UniversalClient, ks Keyspace, policy CodePolicy) *CodeStore {
	return &CodeStore{rdb: rdb, ks: ks, policy: policy}
}

// keys share the hash tag {target}, so both land in one Redis Cluster slot.
func (s *CodeStore) keys(target string) []string {
	base := s.ks.Key("code", "{"+target+"}")
	return []string{base, base + ":attempts"}
}

// Put stores code for target unless one was sent within the resend interval.
func (s *CodeStore) Put(ctx context.Context, target, code string) error {
	n, err := codeSend.Run(ctx, s.rdb, s.keys(target), code, int(s.policy.Validity.Seconds()),
		int(s.policy.Resend.Seconds()), s.policy.Attempts).Int()
	if err != nil {
		return fmt.Errorf("store login code: %w", err)
	}
	switch n {
	case 0:
		return nil
	case -1:
		return &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: s.policy.Resend}
	default:
		return fmt.Errorf("store login code: key %s has no expiry", s.keys(target)[0])
	}
}

// Withdraw deletes target's code if it is still code (a newer one is left alone), lifting the
// resend interval: used when the code's delivery could not be queued.
func (s *CodeStore) Withdraw(ctx context.Context, target, code string) error {
	if err := codeWithdraw.Run(ctx, s.rdb, s.keys(target), code).Err(); err != nil {
		return fmt.Errorf("withdraw login code: %w", err)
	}
	return nil
}

// Check verifies code for target.
func (s *CodeStore) Check(ctx context.Context, target, code string) error {
	n, err := codeVerify.Run(ctx, s.rdb, s.keys(target), code).Int()
	if err != nil {
		return fmt.Errorf("verify login code: %w", err)
	}
	switch {
	case n == 0:
		return nil
	case n == -1:
		return &domain.CodeError{Reason: domain.CodeMissing}
	case n == -2:
		return &domain.CodeError{Reason: domain.CodeBurned}
	case n > 0:
		return &domain.CodeError{Reason: domain.CodeWrong, AttemptsLeft: n}
	default:
		return fmt.Errorf("verify login code: key %s has no expiry", s.keys(target)[0])
	}
}
