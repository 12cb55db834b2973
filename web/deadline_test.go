package web_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
)

// TestRequestDeadline: every request's context carries INKWELL_REQUEST_TIMEOUT's deadline, so
// the calls a handler makes stop when it passes, and the request is answered 503 (not 500).
func TestRequestDeadline(t *testing.T) {
	t.Parallel()
	t.Run("work_that_outlives_the_deadline_is_cut_short_and_answered_503", func(t *testing.T) {
		t.Parallel()
		const timeout = 50 * time.Millisecond
		b := setupWith(t, web.RouterConfig{MaxBodyBytes: maxBodyBytes, RequestTimeout: timeout})
		began := time.Now()
		var deadline time.Time
		b.profiles.EXPECT().Get(gomock.Any(), int64(0), "slow").DoAndReturn(func(ctx context.Context, _ int64, _ string) (domain.Profile, error) {
			var ok bool
			if deadline, ok = ctx.Deadline(); !ok {
				return domain.Profile{}, errors.New("the request's context has no deadline")
			}
			<-ctx.Done() // a statement waiting on a lock, say: it ends with the request's context
			return domain.Profile{}, ctx.Err()
		})
		rec := b.do(newRequest(http.MethodGet, "/api/profiles/slow", "", nil))
		ended := time.Now()
		requireErrors(t, rec, http.StatusServiceUnavailable, map[string][]string{"body": {"the request took too long; retry shortly"}})
		if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || secs <= 0 {
			t.Errorf("Retry-After = %q, want a positive number of seconds", rec.Header().Get("Retry-After"))
		}
		if deadline.Before(began.Add(timeout)) || deadline.After(ended.Add(timeout)) {
			t.Errorf("the handler's deadline was %v after the request began, want %v after it arrived", deadline.Sub(began), timeout)
		}
	})
	t.Run("zero_sets_no_deadline", func(t *testing.T) {
		t.Parallel()
		b := setupWith(t, web.RouterConfig{MaxBodyBytes: maxBodyBytes})
		b.profiles.EXPECT().Get(gomock.Any(), int64(0), "celeb").DoAndReturn(func(ctx context.Context, _ int64, _ string) (domain.Profile, error) {
			if _, ok := ctx.Deadline(); ok {
				return domain.Profile{}, errors.New("a deadline without INKWELL_REQUEST_TIMEOUT")
			}
			return domain.Profile{Username: "celeb"}, nil
		})
		requireStatus(t, b.do(newRequest(http.MethodGet, "/api/profiles/celeb", "", nil)), http.StatusOK)
	})
}
