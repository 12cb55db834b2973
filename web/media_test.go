package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type uploadBundle struct {
	users   *mocks.MockUserService
	uploads *mocks.MockUploadService
	limiter *mocks.MockRateLimiter
}

const testUploadMax = 64 << 10

// multipartBody is a multipart/form-data body with one part per field (file parts for "file").
func multipartBody(t *testing.T, fields map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, data := range fields {
		var part io.Writer
		var err error
		if name == "file" {
			part, err = w.CreateFormFile(name, "picture.png")
		} else {
			part, err = w.CreateFormField(name)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, _ = part.Write(data)
	}
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

var upFixture = domain.Upload{ID: 9, UserID: authedID, Key: "ab.png", ContentType: "image/png", Width: 64, Height: 48, Bytes: 1234,
	SHA256: "ab", CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	Variants: map[string]domain.UploadVariant{domain.VariantThumb: {Key: "cd.png", Width: 16, Height: 12, Bytes: 99}}}

func TestUploadHandler(t *testing.T) {
	t.Parallel()
	a := gomock.Any()
	png := []byte("\x89PNG\r\n\x1a\nimage-bytes")
	tests := []struct {
		name          string
		method        string
		target        string
		contentType   string
		body          []byte
		buildStubs    func(b uploadBundle)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "a multipart file is streamed to the use case: 201 with the upload", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().Upload(a, sessionCred, a, a).DoAndReturn(func(_ any, _ domain.Credential, r io.Reader, declared int64) (domain.Upload, error) {
					got, _ := io.ReadAll(r)
					if !bytes.Equal(got, png) || declared <= int64(len(png)) {
						t.Errorf("the use case read %q (declared %d)", got, declared)
					}
					return upFixture, nil
				})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusCreated)
				var body struct {
					Upload struct {
						ID       int64  `json:"id"`
						URL      string `json:"url"`
						Variants map[string]struct {
							URL string `json:"url"`
						} `json:"variants"`
					} `json:"upload"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Upload.ID != 9 ||
					body.Upload.URL != "/media/ab.png" || body.Upload.Variants["thumb"].URL != "/media/cd.png" {
					t.Fatalf("body %s (%v)", rec.Body, err)
				}
			},
		},
		{
			name: "not multipart: 415, the use case never called", method: http.MethodPost, target: "/api/uploads", contentType: "application/json",
			body:       []byte(`{"file":"x"}`),
			buildStubs: func(b uploadBundle) { b.uploads.EXPECT().Upload(a, a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnsupportedMediaType)
			},
		},
		{
			name: "no part named file: 422, the use case never called", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) { b.uploads.EXPECT().Upload(a, a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "a declared body over the limit and its framing: 413 before reading", method: http.MethodPost, target: "/api/uploads",
			body:       bytes.Repeat([]byte("x"), testUploadMax+(1<<20)+1),
			buildStubs: func(b uploadBundle) { b.uploads.EXPECT().Upload(a, a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusRequestEntityTooLarge)
			},
		},
		{
			name: "a streamed body over the bound: 413 whatever the reader called it", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().Upload(a, a, a, a).DoAndReturn(func(_ any, _ domain.Credential, r io.Reader, _ int64) (domain.Upload, error) {
					_, err := io.ReadAll(r)
					return domain.Upload{}, domain.NewValidationError("file", "is truncated: "+err.Error())
				})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusRequestEntityTooLarge)
			},
		},
		{
			name: "the processor's refusals map: unsupported 415", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().Upload(a, a, a, a).Return(domain.Upload{}, domain.ErrMediaUnsupported)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnsupportedMediaType)
			},
		},
		{
			name: "over the day's quota: 429 with Retry-After", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().Upload(a, a, a, a).Return(domain.Upload{}, &domain.QuotaError{Daily: true, RetryAfter: 90 * time.Second})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusTooManyRequests)
				if rec.Header().Get("Retry-After") != "90" {
					t.Fatalf("Retry-After %q", rec.Header().Get("Retry-After"))
				}
			},
		},
		{
			name: "over the total quota: 413 asking to delete uploads", method: http.MethodPost, target: "/api/uploads",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().Upload(a, a, a, a).Return(domain.Upload{}, &domain.QuotaError{})
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusRequestEntityTooLarge)
				if !strings.Contains(rec.Body.String(), "delete some uploads") {
					t.Fatalf("body %s", rec.Body)
				}
			},
		},
		{
			name: "lists the viewer's uploads with a cursor", method: http.MethodGet, target: "/api/user/uploads?limit=1",
			buildStubs: func(b uploadBundle) {
				b.uploads.EXPECT().List(a, sessionCred, domain.Page{Limit: 1}).Return(service.UploadList{
					Uploads: []domain.Upload{upFixture}, NextCursor: &domain.Cursor{CreatedAt: upFixture.CreatedAt, ID: 9}}, nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusOK)
				if !strings.Contains(rec.Body.String(), `"nextCursor":"`) || !strings.Contains(rec.Body.String(), `"id":9`) {
					t.Fatalf("body %s", rec.Body)
				}
			},
		},
		{
			name: "a bad cursor: 422, the use case never called", method: http.MethodGet, target: "/api/user/uploads?cursor=nope",
			buildStubs: func(b uploadBundle) { b.uploads.EXPECT().List(a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				requireStatus(t, rec, http.StatusUnprocessableEntity)
			},
		},
		{
			name: "deletes: 204", method: http.MethodDelete, target: "/api/uploads/9",
			buildStubs:    func(b uploadBundle) { b.uploads.EXPECT().Delete(a, sessionCred, int64(9)).Return(nil) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNoContent) },
		},
		{
			name: "another's upload: 404", method: http.MethodDelete, target: "/api/uploads/8",
			buildStubs:    func(b uploadBundle) { b.uploads.EXPECT().Delete(a, a, int64(8)).Return(domain.ErrNotFound) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
		{
			name: "a non-numeric id: 404, the use case never called", method: http.MethodDelete, target: "/api/uploads/x",
			buildStubs:    func(b uploadBundle) { b.uploads.EXPECT().Delete(a, a, a).Times(0) },
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { requireStatus(t, rec, http.StatusNotFound) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			b := uploadBundle{users: mocks.NewMockUserService(ctrl), uploads: mocks.NewMockUploadService(ctrl), limiter: mocks.NewMockRateLimiter(ctrl)}
			// AnyTimes: a body declared too large is refused before authentication.
			b.users.EXPECT().Authenticate(a, "TOKEN").Return(sessionCred, nil).AnyTimes()
			b.uploads.EXPECT().MaxBytes().Return(int64(testUploadMax)).AnyTimes()
			b.limiter.EXPECT().Allow(a, a, a, a).Return(domain.RateDecision{Allowed: true, Limit: 30, Remaining: 29, Reset: time.Minute}, nil).AnyTimes()
			tc.buildStubs(b)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes, UploadMaxBytes: testUploadMax,
				RateLimits: web.RateLimits{Uploads: web.DefaultUploadRate}}, logger, web.Handlers{
				Auth: web.NewAuthenticator(b.users, logger), Uploads: web.NewUploadHandler(b.uploads, logger), Limiter: b.limiter,
			})
			body, ct := tc.body, tc.contentType
			if tc.method == http.MethodPost && body == nil {
				fields := map[string][]byte{"file": png}
				if strings.Contains(tc.name, "streamed body over the bound") {
					fields = map[string][]byte{"file": bytes.Repeat([]byte("x"), testUploadMax+(1<<20)+10)}
				}
				if strings.Contains(tc.name, "no part named file") {
					fields = map[string][]byte{"picture": png}
				}
				ct, body = multipartBody(t, fields)
			}
			if ct == "" && tc.method == http.MethodPost {
				ct = "multipart/form-data; boundary=x"
			}
			req := httptest.NewRequest(tc.method, tc.target, bytes.NewReader(body))
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			req.Header.Set("Authorization", "Token TOKEN")
			if strings.Contains(tc.name, "streamed body") {
				req.ContentLength = -1 // chunked: only the bounded reader can tell
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			tc.checkResponse(t, rec)
		})
	}
}
