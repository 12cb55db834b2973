package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type uploadDeps struct {
	store *mocks.MockUploadStore
	proc  *mocks.MockImageProcessor
	media *mocks.MockMediaStore
}

const uploadMax = 10 << 20

var uploadQuota = domain.UploadQuota{PerDay: 100 << 20, Total: 1 << 30}

func newUploadService(t *testing.T) (*service.UploadService, uploadDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := uploadDeps{store: mocks.NewMockUploadStore(ctrl), proc: mocks.NewMockImageProcessor(ctrl), media: mocks.NewMockMediaStore(ctrl)}
	return service.NewUploadService(d.store, d.proc, d.media, txUnitOfWork{noHooksTx{}},
		service.UploadConfig{MaxBytes: uploadMax, Quota: uploadQuota}), d
}

// noUploadWrites proves the request never reached the processor, the rows or the media store.
func noUploadWrites(d uploadDeps) {
	a := gomock.Any()
	d.proc.EXPECT().Process(a, a, a).Times(0)
	d.store.EXPECT().LockUserIn(a, a, a).Times(0)
	d.store.EXPECT().InsertIn(a, a, a).Times(0)
	d.store.EXPECT().DeleteIn(a, a, a, a).Times(0)
	d.media.EXPECT().Put(a, a, a, a).Times(0)
	d.media.EXPECT().Delete(a, a).Times(0)
}

func testImage() domain.ProcessedImage {
	f := func(name string, w, h int, data string) domain.ImageFile {
		return domain.ImageFile{Name: name, ContentType: "image/png", Ext: "png", Width: w, Height: h, Data: []byte(data),
			SHA256: strings.Repeat(string(rune('a'+len(name)%26)), 64)}
	}
	return domain.ProcessedImage{Original: f("", 640, 480, "original-bytes"),
		Variants: []domain.ImageFile{f(domain.VariantThumb, 160, 120, "thumb"), f(domain.VariantAvatar, 256, 256, "avatar")}}
}

func TestUploadService_Upload(t *testing.T) {
	t.Parallel()
	session := domain.Credential{UserID: 7, SessionID: "s"}
	img := testImage()
	a := gomock.Any()
	tests := []struct {
		name       string
		cred       domain.Credential
		declared   int64
		buildStubs func(d uploadDeps)
		check      func(t *testing.T, u domain.Upload, err error)
	}{
		{
			name: "processes, inserts under the user's lock with the quota checked again, then puts every file", cred: session, declared: 2000,
			buildStubs: func(d uploadDeps) {
				gomock.InOrder(
					d.store.EXPECT().Usage(a, int64(7)).Return(domain.UploadUsage{}, nil),
					d.proc.EXPECT().Process(a, a, int64(uploadMax)).Return(img, nil),
					d.store.EXPECT().LockUserIn(a, noHooksTx{}, int64(7)).Return(domain.UploadUsage{Total: 10, Day: 10}, nil),
					d.store.EXPECT().InsertIn(a, noHooksTx{}, gomock.Cond(func(u domain.Upload) bool {
						return u.UserID == 7 && u.Key == img.Original.Key() && u.Bytes == int64(len(img.Original.Data)) &&
							u.Variants[domain.VariantThumb].Key == img.Variants[0].Key() && u.Width == 640
					})).DoAndReturn(func(_ context.Context, _ service.Tx, u domain.Upload) (domain.Upload, error) {
						u.ID = 99
						return u, nil
					}),
				)
				d.media.EXPECT().Put(a, img.Original.Key(), "image/png", img.Original.Data).Return(nil)
				d.media.EXPECT().Put(a, img.Variants[0].Key(), "image/png", img.Variants[0].Data).Return(nil)
				d.media.EXPECT().Put(a, img.Variants[1].Key(), "image/png", img.Variants[1].Data).Return(nil)
			},
			check: func(t *testing.T, u domain.Upload, err error) {
				if err != nil || u.ID != 99 || len(u.Variants) != 2 {
					t.Fatalf("got %+v, %v", u, err)
				}
			},
		},
		{
			name: "anonymous: 401, nothing read", cred: domain.Credential{},
			buildStubs: func(d uploadDeps) { d.store.EXPECT().Usage(a, a).Times(0); noUploadWrites(d) },
			check:      wantUploadErr(domain.ErrUnauthorized),
		},
		{
			name: "a read-only API key: 403, nothing read", cred: domain.Credential{UserID: 7, APIKeyID: 3, Scopes: []domain.Scope{domain.ScopeRead}},
			buildStubs: func(d uploadDeps) { d.store.EXPECT().Usage(a, a).Times(0); noUploadWrites(d) },
			check:      wantUploadErr(domain.ErrForbidden),
		},
		{
			name: "a declared size over the limit: 413 before anything is read", cred: session, declared: uploadMax + 1,
			buildStubs: func(d uploadDeps) { d.store.EXPECT().Usage(a, a).Times(0); noUploadWrites(d) },
			check:      wantUploadErr(domain.ErrMediaTooLarge),
		},
		{
			name: "over the total with the declared size: 413 before processing", cred: session, declared: 5000,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, int64(7)).Return(domain.UploadUsage{Total: uploadQuota.Total - 100}, nil)
				noUploadWrites(d)
			},
			check: func(t *testing.T, _ domain.Upload, err error) {
				var q *domain.QuotaError
				if !errors.As(err, &q) || q.Daily {
					t.Fatalf("got %v, want the total quota's error", err)
				}
			},
		},
		{
			name: "over the day's quota: 429 with when it frees, before processing", cred: session, declared: 5000,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, int64(7)).Return(domain.UploadUsage{Day: uploadQuota.PerDay - 100, DayFreesAt: time.Now().Add(time.Hour)}, nil)
				noUploadWrites(d)
			},
			check: func(t *testing.T, _ domain.Upload, err error) {
				var q *domain.QuotaError
				if !errors.As(err, &q) || !q.Daily || q.RetryAfter < 59*time.Minute {
					t.Fatalf("got %#v, want the daily quota's error with about an hour to wait", err)
				}
			},
		},
		{
			name: "an unknown size is bounded by the limit for the first check", cred: session, declared: -1,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, int64(7)).Return(domain.UploadUsage{Total: uploadQuota.Total - uploadMax + 1}, nil)
				noUploadWrites(d)
			},
			check: func(t *testing.T, _ domain.Upload, err error) {
				if _, ok := errors.AsType[*domain.QuotaError](err); !ok {
					t.Fatalf("got %v", err)
				}
			},
		},
		{
			name: "a concurrent upload filled the quota meanwhile: refused under the lock, nothing inserted or stored", cred: session, declared: 2000,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, int64(7)).Return(domain.UploadUsage{}, nil)
				d.proc.EXPECT().Process(a, a, a).Return(img, nil)
				d.store.EXPECT().LockUserIn(a, a, int64(7)).Return(domain.UploadUsage{Total: uploadQuota.Total - 1}, nil)
				d.store.EXPECT().InsertIn(a, a, a).Times(0)
				d.media.EXPECT().Put(a, a, a, a).Times(0)
			},
			check: func(t *testing.T, _ domain.Upload, err error) {
				if _, ok := errors.AsType[*domain.QuotaError](err); !ok {
					t.Fatalf("got %v", err)
				}
			},
		},
		{
			name: "not an image: the processor's 415, nothing stored", cred: session, declared: 100,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, a).Return(domain.UploadUsage{}, nil)
				d.proc.EXPECT().Process(a, a, a).Return(domain.ProcessedImage{}, domain.ErrMediaUnsupported)
				d.store.EXPECT().LockUserIn(a, a, a).Times(0)
				d.store.EXPECT().InsertIn(a, a, a).Times(0)
				d.media.EXPECT().Put(a, a, a, a).Times(0)
			},
			check: wantUploadErr(domain.ErrMediaUnsupported),
		},
		{
			name: "the store fails: the row is deleted again and the error returned", cred: session, declared: 2000,
			buildStubs: func(d uploadDeps) {
				d.store.EXPECT().Usage(a, a).Return(domain.UploadUsage{}, nil)
				d.proc.EXPECT().Process(a, a, a).Return(img, nil)
				d.store.EXPECT().LockUserIn(a, a, a).Return(domain.UploadUsage{}, nil)
				d.store.EXPECT().InsertIn(a, a, a).DoAndReturn(func(_ context.Context, _ service.Tx, u domain.Upload) (domain.Upload, error) {
					u.ID = 99
					return u, nil
				})
				d.media.EXPECT().Put(a, a, a, a).Return(domain.ErrUnavailable)
				d.store.EXPECT().DeleteIn(a, a, int64(7), int64(99)).Return(domain.Upload{}, nil)
			},
			check: wantUploadErr(domain.ErrUnavailable),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, d := newUploadService(t)
			tc.buildStubs(d)
			u, err := svc.Upload(t.Context(), tc.cred, strings.NewReader("image"), tc.declared)
			tc.check(t, u, err)
		})
	}
}

func wantUploadErr(want error) func(t *testing.T, _ domain.Upload, err error) {
	return func(t *testing.T, _ domain.Upload, err error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("got %v, want %v", err, want)
		}
	}
}

func TestUploadService_DeleteAndList(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	session := domain.Credential{UserID: 7, SessionID: "s"}

	t.Run("deletes the user's own upload in a unit of work", func(t *testing.T) {
		t.Parallel()
		svc, d := newUploadService(t)
		d.store.EXPECT().DeleteIn(a, noHooksTx{}, int64(7), int64(5)).Return(domain.Upload{ID: 5}, nil)
		d.media.EXPECT().Delete(a, a).Times(0) // objects go with the retention pass
		if err := svc.Delete(t.Context(), session, 5); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("another's upload is not found", func(t *testing.T) {
		t.Parallel()
		svc, d := newUploadService(t)
		d.store.EXPECT().DeleteIn(a, a, int64(7), int64(6)).Return(domain.Upload{}, domain.ErrNotFound)
		if err := svc.Delete(t.Context(), session, 6); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a read-only key may not delete", func(t *testing.T) {
		t.Parallel()
		svc, d := newUploadService(t)
		noUploadWrites(d)
		err := svc.Delete(t.Context(), domain.Credential{UserID: 7, APIKeyID: 1, Scopes: []domain.Scope{domain.ScopeRead}}, 5)
		if !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("lists a page and a cursor when more exist", func(t *testing.T) {
		t.Parallel()
		svc, d := newUploadService(t)
		at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		rows := []domain.Upload{{ID: 3, CreatedAt: at}, {ID: 2, CreatedAt: at}, {ID: 1, CreatedAt: at}}
		d.store.EXPECT().List(a, int64(7), (*domain.Cursor)(nil), 3).Return(rows, nil)
		l, err := svc.List(t.Context(), session, domain.Page{Limit: 2})
		if err != nil || len(l.Uploads) != 2 || l.NextCursor == nil || l.NextCursor.ID != 2 {
			t.Fatalf("got %+v, %v", l, err)
		}
	})
	t.Run("anonymous may not list", func(t *testing.T) {
		t.Parallel()
		svc, d := newUploadService(t)
		d.store.EXPECT().List(a, a, a, a).Times(0)
		if _, err := svc.List(t.Context(), domain.Credential{}, domain.Page{}); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("got %v", err)
		}
	})
}
