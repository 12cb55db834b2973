package web_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
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
	t.Run("an_upload_gets_the_upload_deadline_instead", func(t *testing.T) {
		t.Parallel()
		const timeout = 50 * time.Millisecond
		ctrl := gomock.NewController(t)
		users, uploads := mocks.NewMockUserService(ctrl), mocks.NewMockUploadService(ctrl)
		users.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(sessionCred, nil)
		uploads.EXPECT().MaxBytes().Return(int64(testUploadMax)).AnyTimes()
		var deadline time.Time
		uploads.EXPECT().Upload(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(ctx context.Context, _ domain.Credential, _ io.Reader, _ int64) (domain.Upload, error) {
				var ok bool
				if deadline, ok = ctx.Deadline(); !ok {
					return domain.Upload{}, errors.New("the upload's context has no deadline")
				}
				return upFixture, nil
			})
		logger := slog.New(slog.DiscardHandler)
		router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, UploadMaxBytes: testUploadMax, RequestTimeout: timeout},
			logger, web.Handlers{Auth: web.NewAuthenticator(users, logger), Uploads: web.NewUploadHandler(uploads, logger)})
		ct, body := multipartBody(t, map[string][]byte{"file": []byte("\x89PNG\r\n\x1a\nimage-bytes")})
		req := httptest.NewRequest(http.MethodPost, "/api/uploads", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Token TOKEN")
		rec := httptest.NewRecorder()
		began := time.Now()
		router.ServeHTTP(rec, req)
		ended := time.Now()
		requireStatus(t, rec, http.StatusCreated)
		if deadline.Before(began.Add(web.UploadDeadline)) || deadline.After(ended.Add(web.UploadDeadline)) {
			t.Errorf("the upload's deadline was %v after it arrived, want %v (not the request timeout %v)", deadline.Sub(began), web.UploadDeadline, timeout)
		}
	})
}
