//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestMakeRunExitsZeroAfterCtrlC runs `make run` on a terminal of its own, as a user would, types
// Ctrl-C once the server is serving, and expects make to exit 0: the server shuts down cleanly and
// make must not report an interrupt. The terminal matters: Ctrl-C is a SIGINT to the terminal's
// foreground process group, which without care holds make as well as the server.
func TestMakeRunExitsZeroAfterCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server through make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	db := testenv.NewDB(t)
	rdb := testenv.NewRedis(t)
	addr := freeAddr(t)

	ptmx, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "run")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+db.URL, "REDIS_URL="+testenv.RedisURL(), "INKWELL_REDIS_PREFIX="+rdb.Prefix,
		"INKWELL_ADDR="+addr, "INKWELL_ENV=dev", "INKWELL_PPROF_ADDR=", "INKWELL_METRICS_ADDR=",
	)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start make run: %v", err)
	}
	tty.Close()

	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(ptmx)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	for serving := false; !serving; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("make run ended before serving:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			serving = strings.Contains(l, `"msg":"serving"`)
		case <-ctx.Done():
			t.Fatalf("make run never served:\n%s", strings.Join(seen, "\n"))
		}
	}
	if _, err := ptmx.Write([]byte{0x03}); err != nil { // what the terminal sends for Ctrl-C
		t.Fatalf("type Ctrl-C: %v", err)
	}
	go func() {
		for range lines { // keep the terminal drained so the server never blocks writing logs
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("make run after Ctrl-C: %v, want exit status 0", err)
	}
}

// openPTY opens a pseudo-terminal pair: the master side (what a terminal emulator holds) and the
// slave side (the process's terminal).
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	return ptmx, tty
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
