package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository/mediastore"
)

// TestMedia_ServedFromEachStore: an object in the local store is served by GET /media/:key with
// its safe, immutable headers and ranges; with S3 the same path redirects to a presigned URL the
// bucket answers; a malformed key is 404 either way; /readyz checks each store. Not parallel: the
// S3 credentials are the process's environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), as in
// production.
func TestMedia_ServedFromEachStore(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "e2e-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "e2e-secret")
	data := []byte("\x89PNG\r\n\x1a\n e2e object bytes")
	sum := sha256.Sum256(data)
	key := hex.EncodeToString(sum[:]) + ".png"
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	t.Run("local", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "media")
		app := startApp(t, func(c *ioc.Config) { c.Media.URL = "file://" + dir })
		local, err := mediastore.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := mediastore.NewStore(local, "file").Put(context.Background(), key, "image/png", data); err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, noRedirect, app.URL+"/media/"+key, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
			t.Fatalf("GET /media/%s: %s %q", key, resp.Status, body)
		}
		for h, want := range map[string]string{
			"Content-Type": "image/png", "X-Content-Type-Options": "nosniff",
			"Content-Security-Policy": "default-src 'none'", "Cache-Control": mediastore.CacheControl,
			"ETag": `"` + key[:64] + `"`,
		} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
		resp, body = get(t, noRedirect, app.URL+"/media/"+key, map[string]string{"Range": "bytes=1-3"})
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1:4]) {
			t.Errorf("range: %s %q", resp.Status, body)
		}
		resp, _ = get(t, noRedirect, app.URL+"/media/"+key, map[string]string{"If-None-Match": `"` + key[:64] + `"`})
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match: %s", resp.Status)
		}
		expectMediaMissing(t, noRedirect, app.URL)
		expectMediaReady(t, app.URL)
	})

	t.Run("s3", func(t *testing.T) {
		endpoint, bucket := testenv.StartS3(t)
		app := startApp(t, func(c *ioc.Config) {
			c.Media.URL = "s3://" + bucket + "?endpoint=" + endpoint + "&region=us-east-1&secure=false"
		})
		s3, err := mediastore.NewS3(mediastore.S3Config{Endpoint: endpoint, Bucket: bucket, Region: "us-east-1",
			Creds: credentials.NewStaticV4("e2e-key", "e2e-secret", "")})
		if err != nil {
			t.Fatal(err)
		}
		if err := mediastore.NewStore(s3, "s3").Put(context.Background(), key, "image/png", data); err != nil {
			t.Fatal(err)
		}
		resp, _ := get(t, noRedirect, app.URL+"/media/"+key, nil)
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || loc == "" {
			t.Fatalf("GET /media/%s with S3: %s, Location %q", key, resp.Status, loc)
		}
		resp, body := get(t, http.DefaultClient, loc, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("GET the presigned URL: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
		}
		expectMediaMissing(t, noRedirect, app.URL)
		expectMediaReady(t, app.URL)
	})
}

// fetched is an answer read whole: its status, headers and body.
type fetched struct {
	StatusCode int
	Status     string
	Header     http.Header
}

func get(t *testing.T, c *http.Client, url string, headers map[string]string) (fetched, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fetched{StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header}, body
}

// expectMediaMissing: keys that are not object keys are 404 in the RealWorld error shape.
func expectMediaMissing(t *testing.T, c *http.Client, base string) {
	t.Helper()
	for _, p := range []string{"/media/x.png", "/media/..%2F..%2Fetc%2Fpasswd", "/media/" + string(bytes.Repeat([]byte("a"), 64)) + ".svg"} {
		resp, body := get(t, c, base+p, nil)
		var e struct {
			Errors map[string][]string `json:"errors"`
		}
		if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
			t.Errorf("GET %s: %s %s, want 404 with errors", p, resp.Status, body)
		}
	}
}

// expectMediaReady: /readyz reports the media store's check.
func expectMediaReady(t *testing.T, base string) {
	t.Helper()
	resp, body := get(t, http.DefaultClient, base+"/readyz", nil)
	var r struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusOK || r.Checks["media"] != "ok" {
		t.Errorf("/readyz: %s %s, want the media check ok", resp.Status, body)
	}
}
