package repository

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// CodeFallback is the PostgreSQL copy of cache.CodeStore's rules, used while Redis is
// unavailable (see service.FallbackCodeStore): the same resend interval, attempts per code,
// per-target failure budget (and strong codes past it), per-client daily send cap, and global send rate, in fixed windows kept in
// login_code_meters. Each step is one transaction holding an advisory lock on the target, so
// concurrent guesses on several instances are counted one at a time. Like the Redis store it only
// sees code hashes.
type CodeFallback struct {
	pool   *pgxpool.Pool
	q      dao.Querier
	policy cache.CodePolicy
	now    func() time.Time
}

// NewCodeFallback returns the fallback store.
func NewCodeFallback(pool *pgxpool.Pool, q dao.Querier, policy cache.CodePolicy, now func() time.Time) *CodeFallback {
	return &CodeFallback{pool: pool, q: q, policy: policy, now: now}
}

const globalCodeMeter = "global"

func failsMeter(target string) string { return "fails:" + target }

// sendsMeter counts the sends client made to target: the daily cap is per client, so nobody can
// use up the owner's.
func sendsMeter(target, client string) string { return "sends:" + target + ":" + client }

// meter returns a meter's hits in its current window and when the window ends (0 hits when none).
func (s *CodeFallback) meter(ctx context.Context, tx *pg.Tx, key string, now time.Time) (int, time.Time, error) {
	row, err := s.q.LoginCodeMeterGet(ctx, tx, dao.LoginCodeMeterGetParams{Key: key, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	return int(row.Hits), row.WindowEnds, pg.Wrapf(err, "read login code meter")
}

func (s *CodeFallback) hit(ctx context.Context, tx *pg.Tx, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	row, err := s.q.LoginCodeMeterHit(ctx, tx, dao.LoginCodeMeterHitParams{Key: key, Now: now, NewWindowEnds: now.Add(window)})
	return int(row.Hits), row.WindowEnds, pg.Wrapf(err, "count login code meter")
}

func waitUntil(end, now time.Time) time.Duration {
	return max(end.Sub(now).Round(time.Second), time.Second)
}

func (s *CodeFallback) inTargetTx(ctx context.Context, target string, fn func(tx *pg.Tx, now time.Time) error) error {
	return pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := s.q.LoginCodeLockTarget(ctx, tx, "login_code:"+target); err != nil {
			return pg.Wrapf(err, "lock login code target")
		}
		return fn(tx, s.now())
	})
}

// Put meters one send and stores codeHash for target, refusing as cache.CodeStore.Put does.
func (s *CodeFallback) Put(ctx context.Context, target, client, codeHash string, strong bool) error {
	var refusal error
	err := s.inTargetTx(ctx, target, func(tx *pg.Tx, now time.Time) error {
		refusal = nil
		if err := s.q.LoginCodePurgeExpired(ctx, tx, now); err != nil {
			return pg.Wrapf(err, "purge login codes")
		}
		n, end, err := s.hit(ctx, tx, globalCodeMeter, now, s.policy.GlobalWindow)
		if err != nil {
			return err
		}
		if n > s.policy.GlobalSends {
			refusal = &domain.CodeError{Reason: domain.CodeBusy, RetryAfter: waitUntil(end, now)}
			return nil // the global hit stays counted, as in Redis
		}
		if fails, end, err := s.meter(ctx, tx, failsMeter(target), now); err != nil || (!strong && fails >= s.policy.FailureBudget) {
			if err == nil {
				refusal = &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: waitUntil(end, now)}
			}
			return err
		}
		code, err := s.q.LoginCodeGet(ctx, tx, dao.LoginCodeGetParams{Target: target, Now: now})
		if err == nil && code.SentAt.Add(s.policy.Resend).After(now) {
			refusal = &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: waitUntil(code.SentAt.Add(s.policy.Resend), now)}
			return nil
		} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return pg.Wrapf(err, "read login code")
		}
		sends := sendsMeter(target, client)
		if n, end, err := s.meter(ctx, tx, sends, now); err != nil || n >= s.policy.DailySends {
			if err == nil {
				refusal = &domain.CodeError{Reason: domain.CodeSendCap, RetryAfter: waitUntil(end, now)}
			}
			return err
		}
		if _, _, err := s.hit(ctx, tx, sends, now, s.policy.BudgetWindow); err != nil {
			return err
		}
		return pg.Wrapf(s.q.LoginCodePut(ctx, tx, dao.LoginCodePutParams{
			Target: target, CodeHash: codeHash, AttemptsLeft: int32(s.policy.Attempts), Now: now, ExpiresAt: now.Add(s.policy.Validity), Strong: strong,
		}), "store login code")
	})
	if err != nil {
		return err
	}
	return refusal
}

// Check verifies codeHash for target against its code and its failure budget, as
// cache.CodeStore.Check does: a strong code is checked even while the budget is used up, and
// wrong guesses do not burn it.
func (s *CodeFallback) Check(ctx context.Context, target, codeHash string) error {
	var refusal error
	err := s.inTargetTx(ctx, target, func(tx *pg.Tx, now time.Time) error {
		refusal = &domain.CodeError{Reason: domain.CodeInvalid}
		fails, end, err := s.meter(ctx, tx, failsMeter(target), now)
		if err != nil {
			return err
		}
		locked := fails >= s.policy.FailureBudget
		code, err := s.q.LoginCodeGet(ctx, tx, dao.LoginCodeGetParams{Target: target, Now: now})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return pg.Wrapf(err, "read login code")
		}
		found := err == nil
		if locked && !(found && code.Strong) {
			refusal = &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: waitUntil(end, now)}
			return nil
		}
		if !found || code.Spent || (!code.Strong && code.AttemptsLeft <= 0) {
			return nil
		}
		if code.CodeHash == codeHash {
			refusal = nil
			return pg.Wrapf(s.q.LoginCodeSpend(ctx, tx, target), "spend login code")
		}
		if !code.Strong {
			if err := s.q.LoginCodeMiss(ctx, tx, target); err != nil {
				return pg.Wrapf(err, "count a wrong login code")
			}
		}
		if locked {
			return nil
		}
		_, _, err = s.hit(ctx, tx, failsMeter(target), now, s.policy.BudgetWindow)
		return err
	})
	if err != nil {
		return err
	}
	return refusal
}

// Withdraw deletes target's code if it is still codeHash and gives client's send back.
func (s *CodeFallback) Withdraw(ctx context.Context, target, client, codeHash string) error {
	return s.inTargetTx(ctx, target, func(tx *pg.Tx, _ time.Time) error {
		n, err := s.q.LoginCodeWithdraw(ctx, tx, dao.LoginCodeWithdrawParams{Target: target, CodeHash: codeHash})
		if err != nil || n == 0 {
			return pg.Wrapf(err, "withdraw login code")
		}
		return pg.Wrapf(s.q.LoginCodeMeterGiveBack(ctx, tx, sendsMeter(target, client)), "give a login code send back")
	})
}
