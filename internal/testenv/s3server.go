package testenv

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	bin, err := fakeS3Binary()
	if err != nil {
		t.Fatalf("build the fake S3 server: %v", err)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the fake S3 server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The server prints its address once it listens: no polling.
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the fake S3 server did not say its address: %v", err)
	}
	endpoint = strings.TrimSpace(line)
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

// fakeS3Binary builds internal/tools/fakes3 into the temporary directory once per process, under a
// name of the module's checkout; the build goes to a file of its own first and is renamed into
// place, so test binaries building at once never run a half-written file.
var fakeS3Binary = sync.OnceValues(func() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "inkwell-fakes3-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fakes3")
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, "fakes3")
	cmd := exec.Command("go", "build", "-o", built, "./internal/tools/fakes3")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./internal/tools/fakes3: %w\n%s", err, out)
	}
	if err := os.Rename(built, bin); err != nil {
		return "", err
	}
	return bin, nil
})
