package testenv

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server process a test can stop and start again, to exercise
// what happens while Redis is down. It listens on a free loopback port, keeps nothing on disk and
// is killed when the test ends.
type RedisServer struct {
	t    testing.TB
	Addr string
	cmd  *exec.Cmd
}

// StartRedisServer starts a private redis-server from the installed binary. `make test` runs
// scripts/services.sh, which installs redis-server when it is missing.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	_, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (run `make test`, which installs it): %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := &RedisServer{t: t, Addr: addr}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start launches the server (again) on the same port and waits until it answers.
func (s *RedisServer) Start() {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.t.TempDir(), "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer within 10s: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's readiness, not synchronizing test logic
	}
}

// Stop kills the server (as an outage would) and waits for it to exit.
func (s *RedisServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// URL is the server's redis:// URL.
func (s *RedisServer) URL() string { return "redis://" + s.Addr + "/0" }

// Port is the server's TCP port.
func (s *RedisServer) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}
