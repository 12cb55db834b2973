package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"
	"time"
)

// StartS3 runs a real S3-compatible server (internal/tools/fakes3: gofakes3 in memory) as a
// process of its own on a free loopback port, creates a bucket in it and kills the process when
// the test ends. It returns the endpoint (host:port, plain http) and the bucket. The server checks
// no signatures: any AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are accepted. The binary is built
// once per test binary (go build reuses its cache across runs).
func StartS3(t testing.TB) (endpoint, bucket string) {
	t.Helper()
	endpoint = startTool(t, "fakes3", "-addr", "127.0.0.1:0")
	var b [6]byte
	_, _ = rand.Read(b[:])
	bucket = "test-" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// CreateBucket is PUT /bucket; the fake server wants no signature.
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+endpoint+"/"+bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create bucket %s: %s", bucket, resp.Status)
	}
	return endpoint, bucket
}
