package web_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/web"
	"github.com/inkwell-dev/inkwell/web/mocks"
)

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

func TestMediaServe(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	key := sha + ".png"
	data := []byte("\x89PNG\r\n\x1a\n0123456789")
	mod := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	object := func() domain.MediaObject {
		return domain.MediaObject{Content: readSeekNopCloser{bytes.NewReader(data)}, Size: int64(len(data)), ModTime: mod}
	}
	inMemory := func() domain.MediaObject {
		o := object()
		o.Data = data
		return o
	}
	wantLocalObject := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		wantMediaStatus(t, rec, http.StatusOK)
		if !bytes.Equal(rec.Body.Bytes(), data) {
			t.Errorf("body %q, want %q", rec.Body, data)
		}
		for h, want := range map[string]string{
			"Content-Type":            "image/png",
			"X-Content-Type-Options":  "nosniff",
			"Content-Security-Policy": "default-src 'none'",
			"Cache-Control":           "public, max-age=31536000, immutable",
			"ETag":                    `"` + sha + `"`,
			"Last-Modified":           mod.Format(http.TimeFormat),
			"Accept-Ranges":           "bytes",
		} {
			if got := rec.Header().Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
	}
	tests := []struct {
		name          string
		path          string
		headers       map[string]string
		buildStubs    func(f *mocks.MockMediaFiles)
		checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "local: the bytes with safe, long-lived headers",
			path: "/media/" + key,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(object(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { wantLocalObject(t, rec) },
		},
		{
			name: "local: an object the store holds in memory: the same answer",
			path: "/media/" + key,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(inMemory(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) { wantLocalObject(t, rec) },
		},
		{
			name:    "local: a range of an object in memory",
			path:    "/media/" + key,
			headers: map[string]string{"Range": "bytes=0-7"},
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(inMemory(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusPartialContent)
				if !bytes.Equal(rec.Body.Bytes(), data[:8]) {
					t.Errorf("body %q, want %q", rec.Body, data[:8])
				}
			},
		},
		{
			name:    "local: an object in memory the client holds is 304",
			path:    "/media/" + key,
			headers: map[string]string{"If-None-Match": `"` + sha + `"`},
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(inMemory(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusNotModified)
				if rec.Body.Len() != 0 {
					t.Errorf("304 with a body: %q", rec.Body)
				}
			},
		},
		{
			name:    "local: a range",
			path:    "/media/" + key,
			headers: map[string]string{"Range": "bytes=0-7"},
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(object(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusPartialContent)
				if !bytes.Equal(rec.Body.Bytes(), data[:8]) {
					t.Errorf("body %q, want %q", rec.Body, data[:8])
				}
			},
		},
		{
			name:    "local: the ETag the client holds is 304",
			path:    "/media/" + key,
			headers: map[string]string{"If-None-Match": `"` + sha + `"`},
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(object(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusNotModified)
				if rec.Body.Len() != 0 {
					t.Errorf("304 with a body: %q", rec.Body)
				}
			},
		},
		{
			name: "a jpeg is served as image/jpeg",
			path: "/media/" + sha + ".jpg",
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), sha+".jpg").Return("", nil)
				f.EXPECT().Open(gomock.Any(), sha+".jpg").Return(object(), nil)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusOK)
				if ct := rec.Header().Get("Content-Type"); ct != "image/jpeg" {
					t.Errorf("Content-Type %q", ct)
				}
			},
		},
		{
			name: "s3: a redirect to the presigned URL",
			path: "/media/" + key,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("https://bucket.example/"+key+"?X-Amz-Signature=abc", nil)
				f.EXPECT().Open(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusFound)
				if loc := rec.Header().Get("Location"); loc != "https://bucket.example/"+key+"?X-Amz-Signature=abc" {
					t.Errorf("Location %q", loc)
				}
				if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=300" {
					t.Errorf("Cache-Control %q", cc)
				}
			},
		},
		{
			name: "a key never stored is 404",
			path: "/media/" + key,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(domain.MediaObject{}, domain.ErrNotFound)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantErrors(http.StatusNotFound, map[string][]string{"media": {"no such media object"}})(t, rec)
			},
		},
		{
			name: "a store failure is 500 without its text",
			path: "/media/" + key,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), key).Return("", nil)
				f.EXPECT().Open(gomock.Any(), key).Return(domain.MediaObject{}, errors.New("EIO on /srv/media"))
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				wantMediaStatus(t, rec, http.StatusInternalServerError)
				if strings.Contains(rec.Body.String(), "/srv/media") {
					t.Errorf("the error text reached the client: %s", rec.Body)
				}
			},
		},
	}
	for _, bad := range []string{
		"/media/x", "/media/" + sha + ".svg", "/media/" + strings.ToUpper(sha) + ".png", "/media/" + sha + ".png.html",
		"/media/..%2F..%2Fetc%2Fpasswd", "/media/" + sha[:63] + ".png", "/media/%00" + key,
	} {
		tests = append(tests, struct {
			name          string
			path          string
			headers       map[string]string
			buildStubs    func(f *mocks.MockMediaFiles)
			checkResponse func(t *testing.T, rec *httptest.ResponseRecorder)
		}{
			name: "malformed " + bad,
			path: bad,
			buildStubs: func(f *mocks.MockMediaFiles) {
				f.EXPECT().Presign(gomock.Any(), gomock.Any()).Times(0)
				f.EXPECT().Open(gomock.Any(), gomock.Any()).Times(0)
			},
			checkResponse: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusNotFound {
					t.Errorf("status %d, want 404; body %s", rec.Code, rec.Body)
				}
			},
		})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			files := mocks.NewMockMediaFiles(ctrl)
			tc.buildStubs(files)
			logger := slog.New(slog.DiscardHandler)
			router := web.NewRouter(web.RouterConfig{MaxBodyBytes: maxBodyBytes}, logger, web.Handlers{
				Media: web.NewMediaHandler(files, logger),
			})
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.Path = ""
			u, err := req.URL.Parse(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			req.URL = u
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			tc.checkResponse(t, rec)
		})
	}
}

func wantMediaStatus(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		body, _ := io.ReadAll(rec.Body)
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, body)
	}
}

func TestMediaURL(t *testing.T) {
	t.Parallel()
	if got := web.MediaURL("ab.png"); got != "/media/ab.png" {
		t.Errorf("MediaURL = %q", got)
	}
}
