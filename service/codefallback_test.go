package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func newFallbackStore(t *testing.T) (*service.FallbackCodeStore, *mocks.MockCodeStore, *mocks.MockCodeStore) {
	t.Helper()
	ctrl := gomock.NewController(t)
	primary, fallback := mocks.NewMockCodeStore(ctrl), mocks.NewMockCodeStore(ctrl)
	return service.NewFallbackCodeStore(primary, fallback, discardLogger), primary, fallback
}

func TestFallbackCodeStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	down := errors.New("redis: connection refused")
	invalid := &domain.CodeError{Reason: domain.CodeInvalid}
	locked := &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: 1}

	t.Run("put_primary_decides", func(t *testing.T) {
		t.Parallel()
		for _, answer := range []error{nil, &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: 1}} {
			s, primary, fallback := newFallbackStore(t)
			primary.EXPECT().Put(ctx, "t", "c", "h", false).Return(answer)
			fallback.EXPECT().Put(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			if err := s.Put(ctx, "t", "c", "h", false); !errors.Is(err, answer) {
				t.Fatalf("put: %v, want %v", err, answer)
			}
		}
	})
	t.Run("put_falls_back_when_the_primary_cannot_decide", func(t *testing.T) {
		t.Parallel()
		s, primary, fallback := newFallbackStore(t)
		primary.EXPECT().Put(ctx, "t", "c", "h", false).Return(down)
		fallback.EXPECT().Put(ctx, "t", "c", "h", false).Return(locked)
		if err := s.Put(ctx, "t", "c", "h", false); !errors.Is(err, locked) {
			t.Fatalf("put: %v, want the fallback's refusal", err)
		}
	})
	t.Run("send_fails_closed_when_neither_can_meter", func(t *testing.T) {
		t.Parallel()
		ctrl := gomock.NewController(t)
		primary, fallback := mocks.NewMockCodeStore(ctrl), mocks.NewMockCodeStore(ctrl)
		primary.EXPECT().Put(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(down)
		fallback.EXPECT().Put(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(errors.New("pg: connection refused"))
		jobs := mocks.NewMockJobEnqueuer(ctrl)
		jobs.EXPECT().Enqueue(gomock.Any(), gomock.Any()).Times(0) // no code goes out unmetered
		accounts := mocks.NewMockCodeAccounts(ctrl)
		accounts.EXPECT().GetByEmail(gomock.Any(), "a@example.com").Return(domain.User{}, domain.ErrNotFound)
		svc := service.NewCodeLoginService(service.NewFallbackCodeStore(primary, fallback, discardLogger), jobs,
			accounts, mocks.NewMockPasswordHasher(ctrl), mocks.NewMockSessionManager(ctrl), noClaims{}, testCodeKeys, discardLogger, time.Now)
		if err := svc.Send(ctx, "a@example.com", ""); !errors.Is(err, domain.ErrUnavailable) {
			t.Fatalf("send with both stores down: %v, want unavailable (503)", err)
		}
	})
	t.Run("check_asks_the_fallback_for_codes_the_primary_does_not_know", func(t *testing.T) {
		t.Parallel()
		s, primary, fallback := newFallbackStore(t)
		primary.EXPECT().Check(ctx, "t", "h").Return(invalid)
		fallback.EXPECT().Check(ctx, "t", "h").Return(nil) // sent while Redis was down
		if err := s.Check(ctx, "t", "h"); err != nil {
			t.Fatalf("check: %v", err)
		}
	})
	t.Run("check_locked_in_the_primary_is_final", func(t *testing.T) {
		t.Parallel()
		s, primary, fallback := newFallbackStore(t)
		primary.EXPECT().Check(ctx, "t", "h").Return(locked)
		fallback.EXPECT().Check(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
		if err := s.Check(ctx, "t", "h"); !errors.Is(err, locked) {
			t.Fatalf("check: %v, want locked", err)
		}
	})
	t.Run("check_with_both_down_is_a_system_error", func(t *testing.T) {
		t.Parallel()
		s, primary, fallback := newFallbackStore(t)
		primary.EXPECT().Check(ctx, "t", "h").Return(down)
		fallback.EXPECT().Check(ctx, "t", "h").Return(errors.New("pg down"))
		if err := s.Check(ctx, "t", "h"); err == nil || service.IsCodeError(err) {
			t.Fatalf("check: %v, want a system error", err)
		}
	})
	t.Run("check_primary_refusal_stands_when_the_fallback_is_down", func(t *testing.T) {
		t.Parallel()
		s, primary, fallback := newFallbackStore(t)
		primary.EXPECT().Check(ctx, "t", "h").Return(invalid)
		fallback.EXPECT().Check(ctx, "t", "h").Return(errors.New("pg down"))
		if err := s.Check(ctx, "t", "h"); !errors.Is(err, invalid) {
			t.Fatalf("check: %v, want the primary's refusal", err)
		}
	})
}
