package service_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

var discardLogger = slog.New(slog.DiscardHandler)

func ptr[T any](v T) *T { return &v }

// requireValidation fails unless err is a *domain.ValidationError with exactly the given fields.
func requireValidation(t *testing.T, err error, want map[string][]string) {
	t.Helper()
	var verr *domain.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error = %v (%T), want *domain.ValidationError %v", err, err, want)
	}
	if !reflect.DeepEqual(verr.Fields, want) {
		t.Fatalf("validation fields = %v, want %v", verr.Fields, want)
	}
}

// requireErrorIs fails unless errors.Is(err, target).
func requireErrorIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one wrapping %v", err, target)
	}
}

// requireNoValidation fails when err is nil or a *domain.ValidationError: an internal failure
// must not be reported to the client as a problem with its input.
func requireNoValidation(t *testing.T, err error) {
	t.Helper()
	var verr *domain.ValidationError
	if err == nil || errors.As(err, &verr) {
		t.Fatalf("error = %v, want a non-validation error", err)
	}
}

// recordedReads is a ReadRecorder that keeps what it was given.
type recordedReads struct {
	mu  sync.Mutex
	evs []domain.ReadEvent
}

func (r *recordedReads) Record(ev domain.ReadEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recordedReads) events() []domain.ReadEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.ReadEvent(nil), r.evs...)
}

// noVerification issues no verification code.
type noVerification struct{}

func (noVerification) IssueVerificationIn(context.Context, service.Tx, domain.User) error { return nil }

// txUnitOfWork runs each unit of work once, at once, with tx: the repositories it is handed to are
// mocks, which expect that tx.
type txUnitOfWork struct{ tx service.Tx }

func (u txUnitOfWork) InTx(_ context.Context, fn func(service.Tx) error) error { return fn(u.tx) }

func (u txUnitOfWork) InTxOnce(_ context.Context, fn func(service.Tx) error) error { return fn(u.tx) }

// fakeBlocks is BlockedSets over a map: blocker id -> the ids blocked (nobody blocks anyone
// unless a test says so).
type fakeBlocks struct {
	mu  sync.Mutex
	set map[int64][]int64
}

func (f *fakeBlocks) BlockedBy(_ context.Context, blockerID int64) ([]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.set[blockerID], nil
}

func (f *fakeBlocks) block(blockerID int64, ids ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.set == nil {
		f.set = map[int64][]int64{}
	}
	f.set[blockerID] = append(f.set[blockerID], ids...)
}

// noUploads knows no uploads: every upload path names nothing of the user's, and references
// record nowhere.
type noUploads struct{}

func (noUploads) OwnedUploads(context.Context, int64, []string) (map[string]int64, error) {
	return map[string]int64{}, nil
}

func (noUploads) ReplaceAvatarIn(context.Context, service.Tx, int64, []int64) error { return nil }

// fakeRenderer renders Markdown as fakeHTML does and counts its calls.
type fakeRenderer struct{ calls atomic.Int64 }

func (r *fakeRenderer) Render(md string) string {
	r.calls.Add(1)
	return fakeHTML(md)
}

func fakeHTML(md string) string { return "<p>" + md + "</p>" }
