package ioc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The connect gate stops dialing after connectGateFailures failed attempts in a row (a refused
// dial, or a connection closed before the server said anything), lets a probe through after the
// pause, and counts any answer from the server as the server working. The resilience suite shows
// what it is for: recovery within a few hundred milliseconds after PostgreSQL's connections were
// reset, where the reconnect storm used to keep the server busy for seconds.
func TestConnectGate(t *testing.T) {
	t.Parallel()
	type dialer struct {
		pcfg  *pgxpool.Config
		dials int
		fail  bool
	}
	setup := func(t *testing.T) *dialer {
		pcfg, err := pgxpool.ParseConfig("postgres://postgres@127.0.0.1:5432/inkwell")
		if err != nil {
			t.Fatal(err)
		}
		d := &dialer{pcfg: pcfg}
		pcfg.ConnConfig.DialFunc = func(context.Context, string, string) (net.Conn, error) {
			d.dials++
			if d.fail {
				return nil, errors.New("connection refused")
			}
			client, server := net.Pipe()
			t.Cleanup(func() { _ = server.Close() })
			go func() { _, _ = server.Write([]byte{'N'}) }() // the server's first answer
			return client, nil
		}
		gateConnects(pcfg, "test pool", slog.New(slog.NewTextHandler(io.Discard, nil)))
		return d
	}
	dial := func(d *dialer) (net.Conn, error) {
		return d.pcfg.ConnConfig.DialFunc(context.Background(), "tcp", "127.0.0.1:5432")
	}
	answered := func(t *testing.T, c net.Conn) {
		t.Helper()
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}

	t.Run("failed dials pause dialing", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		d.fail = true
		for range connectGateFailures {
			if _, err := dial(d); err == nil || errors.Is(err, errConnectPaused) {
				t.Fatalf("dial while the gate is open: %v, want the dial's own error", err)
			}
		}
		if _, err := dial(d); !errors.Is(err, errConnectPaused) {
			t.Fatalf("dial after %d failures: %v, want errConnectPaused", connectGateFailures, err)
		}
		if d.dials != connectGateFailures {
			t.Fatalf("%d dials reached the server, want %d", d.dials, connectGateFailures)
		}
	})

	t.Run("connections closed before an answer count as failures", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		for range connectGateFailures {
			c, err := dial(d)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Close() // reset or timed out before the server said anything
		}
		if _, err := dial(d); !errors.Is(err, errConnectPaused) {
			t.Fatalf("dial after %d unanswered connections: %v, want errConnectPaused", connectGateFailures, err)
		}
	})

	t.Run("an answer resets the count", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		for range 3 * connectGateFailures {
			for range connectGateFailures - 1 {
				c, err := dial(d)
				if err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
			}
			c, err := dial(d)
			if err != nil {
				t.Fatalf("dial after %d failures and an answer: %v", connectGateFailures-1, err)
			}
			answered(t, c)
		}
	})

	t.Run("a connected connection dials only cancel requests: never counted, refused while paused", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		ctx := context.Background()
		conn := d.pcfg.ConnConfig.Copy() // what pgxpool hands BeforeConnect for each new connection
		if err := d.pcfg.BeforeConnect(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if err := conn.AfterConnect(ctx, nil); err != nil { // connected
			t.Fatal(err)
		}
		cancelRequest := func() (net.Conn, error) { return conn.DialFunc(ctx, "tcp", "127.0.0.1:5432") }
		for range 2 * connectGateFailures {
			c, err := cancelRequest()
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Close() // the server closes a cancel request without an answer
		}
		c, err := dial(d)
		if err != nil {
			t.Fatalf("a connection attempt after %d unanswered cancel requests: %v", 2*connectGateFailures, err)
		}
		answered(t, c)
		d.fail = true
		for range connectGateFailures {
			_, _ = dial(d)
		}
		if _, err := cancelRequest(); !errors.Is(err, errConnectPaused) {
			t.Fatalf("a cancel request while paused: %v, want errConnectPaused", err)
		}
	})

	t.Run("after the pause one probe passes and its answer reopens the gate", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		d.fail = true
		for range connectGateFailures {
			_, _ = dial(d)
		}
		d.fail = false
		deadline := time.Now().Add(10 * connectGatePause)
		var probe net.Conn
		for probe == nil {
			c, err := dial(d)
			switch {
			case err == nil:
				probe = c
			case !errors.Is(err, errConnectPaused):
				t.Fatal(err)
			case time.Now().After(deadline):
				t.Fatalf("still paused %v after the failures (pause %v)", 10*connectGatePause, connectGatePause)
			default:
				time.Sleep(connectGatePause / 10) // the pause runs on gobreaker's own clock
			}
		}
		if _, err := dial(d); !errors.Is(err, errConnectPaused) {
			t.Fatalf("a second dial while the probe is out: %v, want errConnectPaused", err)
		}
		answered(t, probe)
		c, err := dial(d)
		if err != nil {
			t.Fatalf("dial after the probe's answer: %v", err)
		}
		answered(t, c)
	})
}
