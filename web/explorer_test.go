package web_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The page and its assets; e2e/explorer_test.go drives the same page in a browser.

func TestExplorerPage(t *testing.T) {
	t.Parallel()
	b := setup(t) // no service call: the page is static
	for _, path := range []string{"/api/docs", "/api/docs/"} {
		rec := b.do(httptest.NewRequest(http.MethodGet, path, nil))
		requireStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type = %q", path, ct)
		}
		page := rec.Body.String()
		for _, want := range []string{`"/api/openapi.yaml"`, `src="/api/docs/swagger-ui-bundle.js"`, `href="/api/docs/swagger-ui.css"`} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %s", path, want)
			}
		}
		// Offline: every src and href is a path on this origin.
		for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
				t.Errorf("%s: the page loads %q, which is not on its own origin", path, m[1])
			}
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		for _, d := range strings.Split(csp, ";") {
			if d = strings.TrimSpace(d); strings.HasPrefix(d, "script-src ") && strings.Contains(d, "'unsafe-") {
				t.Errorf("%s: %q lets any inline script (or eval) run", path, d)
			}
		}
		// Each inline script is allowed by its hash, or the browser would not run it.
		scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
		if len(scripts) == 0 {
			t.Fatalf("%s: no inline script found; the page is not swgui's", path)
		}
		for _, s := range scripts {
			sum := sha256.Sum256([]byte(s[1]))
			if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, h) {
				t.Errorf("%s: script-src lacks %s for an inline script", path, h)
			}
		}
	}
}

func TestExplorerAssets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ name, contentType, contains string }{
		{"swagger-ui-bundle.js", "javascript", "SwaggerUIBundle"},
		{"swagger-ui-standalone-preset.js", "javascript", "SwaggerUIStandalonePreset"},
		{"swagger-ui.css", "text/css", ".swagger-ui"},
		{"favicon-32x32.png", "image/png", "PNG"},
	} {
		plain := b.do(httptest.NewRequest(http.MethodGet, "/api/docs/"+tc.name, nil))
		requireStatus(t, plain, http.StatusOK)
		if ct := plain.Header().Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
			t.Errorf("%s: Content-Type = %q, want %s", tc.name, ct, tc.contentType)
		}
		if !bytes.Contains(plain.Body.Bytes(), []byte(tc.contains)) {
			t.Errorf("%s: %d bytes without %q (served compressed to a client that did not ask?)", tc.name, plain.Body.Len(), tc.contains)
		}
		if tc.contentType == "image/png" {
			continue // stored as is
		}
		req := httptest.NewRequest(http.MethodGet, "/api/docs/"+tc.name, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		zipped := b.do(req)
		requireStatus(t, zipped, http.StatusOK)
		if ce := zipped.Header().Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("%s: Content-Encoding = %q, want gzip", tc.name, ce)
		}
		zr, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatal(err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(unzipped, plain.Body.Bytes()) {
			t.Errorf("%s: the gzip answer unpacks to %d bytes, the plain one has %d", tc.name, len(unzipped), plain.Body.Len())
		}
	}
}

func TestExplorerUnknownAssetIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/api/docs/nope.js", "/api/docs/swagger-ui.css.gz", "/api/docs/a/b", "/api/docs/..%2fopenapi.yaml", "/api/docs//"} {
		rec := b.do(httptest.NewRequest(http.MethodGet, path, nil))
		requireErrors(t, rec, http.StatusNotFound, map[string][]string{"body": {"no such endpoint"}})
	}
	rec := b.do(httptest.NewRequest(http.MethodPost, "/api/docs", nil))
	requireStatus(t, rec, http.StatusMethodNotAllowed)
}
