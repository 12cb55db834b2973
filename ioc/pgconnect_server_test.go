package ioc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
)

// fakePostgres listens on a loopback port and speaks just enough of PostgreSQL's protocol for
// pgx, so that a test can make pgx's own code give a connection up in the middle of a statement
// and see what it dials then: it accepts every login (after hold, when set, is closed), never
// answers a statement, and reads a cancel request and closes without a word, as PostgreSQL does.
type fakePostgres struct {
	t    *testing.T
	ln   net.Listener
	hold chan struct{} // nil: answer logins at once

	started    chan struct{} // a login arrived
	statements chan struct{} // a connection sent its first statement
	cancels    chan struct{} // a cancel request arrived
	ended      chan struct{} // a logged-in connection ended
}

func startFakePostgres(t *testing.T, hold chan struct{}) *fakePostgres {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePostgres{t: t, ln: ln, hold: hold, started: make(chan struct{}, 64), statements: make(chan struct{}, 64),
		cancels: make(chan struct{}, 64), ended: make(chan struct{}, 64)}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for pid := uint32(1); ; pid++ {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { f.serve(conn, pid) })
		}
	})
	return f
}

// poolConfig is a pool of at most maxConns connections to the fake server, with the gate on.
func (f *fakePostgres) poolConfig(maxConns int, log *slog.Logger) *pgxpool.Config {
	f.t.Helper()
	pcfg, err := pgxpool.ParseConfig("postgres://postgres@" + f.ln.Addr().String() + "/inkwell?sslmode=disable&pool_max_conns=" + strconv.Itoa(maxConns))
	if err != nil {
		f.t.Fatal(err)
	}
	gateConnects(pcfg, "test pool", log)
	return pcfg
}

func (f *fakePostgres) serve(conn net.Conn, pid uint32) {
	defer conn.Close()
	be := pgproto3.NewBackend(conn, conn)
	msg, err := be.ReceiveStartupMessage()
	if err != nil {
		return
	}
	switch msg.(type) {
	case *pgproto3.CancelRequest:
		f.cancels <- struct{}{}
		return // closed unanswered
	case *pgproto3.StartupMessage:
	default:
		f.t.Errorf("fake PostgreSQL: unexpected first message %T", msg)
		return
	}
	f.started <- struct{}{}
	if f.hold != nil {
		<-f.hold
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0"})
	be.Send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: []byte{0, 0, 0, byte(pid)}})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := be.Flush(); err != nil {
		return
	}
	defer func() { f.ended <- struct{}{} }()
	reported := false
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return
		}
		if !reported {
			reported = true
			f.statements <- struct{}{}
		}
	}
}

// gateLog records what the gate logs: a pause is a line saying so.
type gateLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *gateLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *gateLog) paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Contains(l.buf.Bytes(), []byte("opening new ones paused"))
}

// A statement given up because its request's context ended (the client went away, the request
// deadline ran out) makes pgx close the connection and send PostgreSQL a cancel request, on a
// connection of its own that the server closes without an answer. Those are not failed connection
// attempts: before the fix, a few statements given up together (a load generator stopping, a
// burst of requests outliving their deadline) paused a healthy server's pool, and the requests
// behind them were answered 503 (issue 26).
func TestConnectGateIgnoresCancelRequests(t *testing.T) {
	t.Parallel()
	srv := startFakePostgres(t, nil)
	log := &gateLog{}
	const n = connectGateFailures + 1
	pool, err := pgxpool.NewWithConfig(context.Background(), srv.poolConfig(n, slog.New(slog.NewTextHandler(log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan error, n)
	for range n { // n statements at once, one per connection
		go func() {
			_, err := pool.Exec(ctx, "SELECT 1")
			results <- err
		}()
	}
	for range n {
		<-srv.statements // each statement is at the server, which never answers it
	}
	cancel()
	for i := range n {
		if err := <-results; !errors.Is(err, context.Canceled) {
			t.Fatalf("statement %d: %v, want context.Canceled", i, err)
		}
	}
	for range n {
		<-srv.cancels // pgx sent each connection's cancel request ...
		<-srv.ended   // ... and then closed it (pgconn's asyncClose, in that order)
	}
	if log.paused() {
		t.Fatalf("the gate paused after %d cancelled statements on a healthy server:\n%s", n, log.buf.String())
	}
	conn, err := pool.Acquire(context.Background()) // a new connection: the old ones were closed
	if err != nil {
		t.Fatalf("connect after %d cancelled statements: %v", n, err)
	}
	conn.Release()
}

// A request that stops waiting for a new connection (its deadline ran out, its client went away)
// leaves the attempt running in the background (pgxpool detaches it from the request's context),
// so the attempt ends when the server answers and counts as a success, not as a connection
// closed unanswered.
func TestConnectGateIgnoresRequestsThatStopWaiting(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	srv := startFakePostgres(t, hold)
	log := &gateLog{}
	const n = connectGateFailures + 1
	pool, err := pgxpool.NewWithConfig(context.Background(), srv.poolConfig(n, slog.New(slog.NewTextHandler(log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan error, 1)
		go func() {
			c, err := pool.Acquire(ctx)
			if err == nil {
				c.Release()
			}
			result <- err
		}()
		<-srv.started // the attempt is at the server, which has not answered yet
		cancel()
		if err := <-result; !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire %d: %v, want context.Canceled", i, err)
		}
	}
	close(hold) // the server answers every login it holds
	conns := make([]*pgxpool.Conn, 0, n)
	for range n { // each waits for one of the attempts above to finish
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatalf("acquire after %d abandoned attempts: %v", n, err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	if log.paused() {
		t.Fatalf("the gate paused after requests stopped waiting for connections:\n%s", log.buf.String())
	}
}
