package testenv

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// startTool runs one of the tests' servers in internal/tools (built once per test binary) with
// args, kills it when the test ends, and returns the first line it prints on stdout: the address
// or URL it listens on, printed once it listens, so no one polls for it.
func startTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	bin, err := toolBinary(name)
	if err != nil {
		t.Fatalf("build internal/tools/%s: %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s did not say where it listens: %v", name, err)
	}
	return strings.TrimSpace(line)
}

var toolBuilds sync.Map // name -> func() (string, error), a sync.OnceValues

// toolBinary builds internal/tools/<name> into the temporary directory once per process, under a
// name of the module's checkout; the build goes to a file of its own first and is renamed into
// place, so test binaries building at once never run a half-written file.
func toolBinary(name string) (string, error) {
	build, _ := toolBuilds.LoadOrStore(name, sync.OnceValues(func() (string, error) { return buildTool(name) }))
	return build.(func() (string, error))()
}

func buildTool(name string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "inkwell-"+name+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, name)
	cmd := exec.Command("go", "build", "-o", built, "./internal/tools/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./internal/tools/%s: %w\n%s", name, err, out)
	}
	if err := os.Rename(built, bin); err != nil {
		return "", err
	}
	return bin, nil
}
