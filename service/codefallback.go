package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/inkwell-dev/inkwell/domain"
)

// FallbackCodeStore is the code store the service uses: Redis (primary) meters and checks every
// step, and PostgreSQL (fallback) takes over a step Redis could not decide (unavailable, breaker
// open). Sending stays fail-closed: when neither can meter a send, Put fails and no code goes out.
//
// A code sent during an outage lives in the fallback only, so a guess Redis refuses as invalid
// is also checked there. That guess then counts against both budgets: the budgets only ever add
// up to more refusals, never fewer. Across an outage a target may get up to its daily cap from
// each store.
type FallbackCodeStore struct {
	primary, fallback CodeStore
	log               *slog.Logger
}

// NewFallbackCodeStore returns the store.
func NewFallbackCodeStore(primary, fallback CodeStore, log *slog.Logger) *FallbackCodeStore {
	return &FallbackCodeStore{primary: primary, fallback: fallback, log: log}
}

// Put meters and stores in the primary, or in the fallback when the primary fails.
func (s *FallbackCodeStore) Put(ctx context.Context, target, client, codeHash string, strong bool) error {
	err := s.primary.Put(ctx, target, client, codeHash, strong)
	if err == nil || IsCodeError(err) {
		return err
	}
	s.log.WarnContext(ctx, "login code store unavailable; metering the send in PostgreSQL", "err", err)
	ferr := s.fallback.Put(ctx, target, client, codeHash, strong)
	if ferr == nil || IsCodeError(ferr) {
		return ferr
	}
	return errors.Join(err, ferr)
}

// Check asks the primary, and the fallback when the primary fails or knows no such code.
func (s *FallbackCodeStore) Check(ctx context.Context, target, codeHash string) error {
	err := s.primary.Check(ctx, target, codeHash)
	var ce *domain.CodeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.Reason != domain.CodeInvalid:
		return err // locked: the fallback cannot lift it
	case ce == nil:
		s.log.WarnContext(ctx, "login code store unavailable; checking the code in PostgreSQL", "err", err)
	}
	ferr := s.fallback.Check(ctx, target, codeHash)
	if ferr == nil || IsCodeError(ferr) {
		return ferr
	}
	if ce != nil {
		return err // the primary's refusal stands when the fallback cannot answer
	}
	return errors.Join(err, ferr)
}

// Withdraw withdraws from both; the code is in one of them.
func (s *FallbackCodeStore) Withdraw(ctx context.Context, target, client, codeHash string) error {
	perr := s.primary.Withdraw(ctx, target, client, codeHash)
	ferr := s.fallback.Withdraw(ctx, target, client, codeHash)
	if perr == nil || ferr == nil {
		return nil
	}
	return errors.Join(perr, ferr)
}
