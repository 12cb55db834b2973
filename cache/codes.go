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

// CodePolicy is the one-time code policy (INKWELL_CODE_* settings, see settings.go).
type CodePolicy struct {
	Validity      time.Duration // how long a code is valid (10 minutes)
	Resend        time.Duration // at most one code per target this often (1 minute)
	Attempts      int           // wrong guesses allowed on one six-digit code before it burns (3)
	FailureBudget int           // wrong guesses per target per BudgetWindow, across codes (10); then only strong codes work
	DailySends    int           // codes one client may have sent to one target per BudgetWindow (10)
	BudgetWindow  time.Duration // the window of FailureBudget and DailySends (24 h)
	GlobalSends   int           // codes sent to anyone per GlobalWindow (600)
	GlobalWindow  time.Duration // (1 minute)
}

// CodeStore keeps one-time login codes, their targets' budgets and the global send meter in
// Redis; every check-and-change is one Lua script. It only ever sees code hashes.
type CodeStore struct {
	rdb    redis.UniversalClient
	ks     Keyspace
	policy CodePolicy
}

// NewCodeStore returns the store.
func NewCodeStore(rdb redis.UniversalClient, ks Keyspace, policy CodePolicy) *CodeStore {
	return &CodeStore{rdb: rdb, ks: ks, policy: policy}
}

// keys share the hash tag {target}, so all three land in one Redis Cluster slot: the code, the
// target's failure budget, and the sends client made to the target.
func (s *CodeStore) keys(target, client string) []string {
	base := s.ks.Key("logincode", "{"+target+"}")
	return []string{base, base + ":budget", base + ":sends:" + client}
}

func secs(d time.Duration) int { return max(int(d.Seconds()), 1) }

// Put meters one send (the global rate first, then target's failure budget, the resend interval
// and client's daily cap for target) and stores codeHash for target. A strong code is sent even
// while the failure budget is used up (see service.CodeLoginService). A send refused by the target
// still used its global token: the global meter errs on the side of sending less.
func (s *CodeStore) Put(ctx context.Context, target, client, codeHash string, strong bool) error {
	res, err := rateLimit.Run(ctx, s.rdb, []string{s.ks.Key("logincode", "global")}, s.policy.GlobalWindow.Milliseconds()).Int64Slice()
	if err != nil {
		return fmt.Errorf("meter login code sends: %w", err)
	}
	if int(res[0]) > s.policy.GlobalSends {
		return &domain.CodeError{Reason: domain.CodeBusy, RetryAfter: roundUp(time.Duration(res[1]) * time.Millisecond)}
	}
	strongFlag := 0
	if strong {
		strongFlag = 1
	}
	res, err = codeSend.Run(ctx, s.rdb, s.keys(target, client), codeHash, secs(s.policy.Validity), secs(s.policy.Resend),
		s.policy.Attempts, s.policy.FailureBudget, s.policy.DailySends, secs(s.policy.BudgetWindow), strongFlag).Int64Slice()
	if err != nil {
		return fmt.Errorf("store login code: %w", err)
	}
	return s.outcome(res, "store login code")
}

// Withdraw deletes target's code if it is still codeHash (a newer one is left alone), lifting the
// resend interval and giving client's send back: used when the code's delivery could not be
// queued.
func (s *CodeStore) Withdraw(ctx context.Context, target, client, codeHash string) error {
	if err := codeWithdraw.Run(ctx, s.rdb, s.keys(target, client), codeHash).Err(); err != nil {
		return fmt.Errorf("withdraw login code: %w", err)
	}
	return nil
}

// Check verifies codeHash for target against its code and its failure budget.
func (s *CodeStore) Check(ctx context.Context, target, codeHash string) error {
	res, err := codeVerify.Run(ctx, s.rdb, s.keys(target, "")[:2], codeHash, s.policy.FailureBudget, secs(s.policy.BudgetWindow)).Int64Slice()
	if err != nil {
		return fmt.Errorf("verify login code: %w", err)
	}
	return s.outcome(res, "verify login code")
}

// outcome turns a script's {status, seconds} into nil or the refusal.
func (s *CodeStore) outcome(res []int64, what string) error {
	wait := time.Duration(res[1]) * time.Second
	switch res[0] {
	case 0:
		return nil
	case -1:
		if wait > 0 {
			return &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: wait}
		}
		return &domain.CodeError{Reason: domain.CodeInvalid}
	case -3:
		return &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: wait}
	case -4:
		return &domain.CodeError{Reason: domain.CodeSendCap, RetryAfter: wait}
	default:
		return fmt.Errorf("%s: a code key has no expiry", what)
	}
}

func roundUp(d time.Duration) time.Duration { return max(d.Round(time.Second), time.Second) }
