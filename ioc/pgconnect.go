package ioc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sony/gobreaker/v2"
)

// errConnectPaused is the dial error of a connection the gate refused; pgx reports it as a
// connection error, which the repositories answer as 503.
var errConnectPaused = errors.New("new PostgreSQL connections paused: the last attempts failed")

// errClosedUnanswered settles an attempt whose connection closed before the server sent a byte
// (the server reset it, or never answered within the connect timeout).
var errClosedUnanswered = errors.New("connection closed before the server answered")

// The connect gate: after connectGateFailures attempts in a row failed, new connections are
// refused at once for connectGatePause, then one attempt probes the server; its success opens the
// gate again, its failure pauses again.
//
// Without it every request that finds no idle connection opens one, so a PostgreSQL that resets
// or drops connections gets a new connection attempt for every request in flight, hundreds a
// second, each costing the server a backend fork. Measured on a 2-core machine: that storm kept
// PostgreSQL from answering new connections, anyone's, for 3 to 5 seconds after the fault had
// cleared. With the gate a failing server sees about one attempt per pause per pool, and the pool
// is back within a pause of the server.
const (
	connectGateFailures = 3
	connectGatePause    = 250 * time.Millisecond
)

// gateConnects installs the connect gate on pcfg's dial. An attempt succeeds when the server
// answers (the first bytes it sends: a TLS handshake, an authentication request, even an error
// such as "too many clients", which costs the server little) and fails when the dial fails or the
// connection closes before any answer.
//
// Only connection attempts count. pgx dials through the same DialFunc to send a cancel request
// when it gives up a connection in the middle of a statement (the request's context ended: its
// deadline ran out, or its client went away), and PostgreSQL never answers a cancel request; it
// reads it and closes. Counted as attempts, three statements given up together (a load generator
// stopping, a burst of requests outliving their deadline) paused a healthy server's pool, and the
// requests that then needed a new connection were answered 503 (issue 26: 245 of 8,800 searches). So each connection gets a dial of its own (BeforeConnect): the dials made while it
// connects are attempts; once it is connected (AfterConnect), a dial through it can only be a
// cancel request, which the gate neither counts nor lets take the probe's place, and which it
// refuses only while paused, as it refuses everything then.
func gateConnects(pcfg *pgxpool.Config, name string, log *slog.Logger) {
	g := &connectGate{dial: pcfg.ConnConfig.DialFunc}
	g.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1, // one probe at a time once the pause is over
		Timeout:     connectGatePause,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= connectGateFailures },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			switch {
			case from == gobreaker.StateClosed:
				log.Warn("PostgreSQL connections failing; opening new ones paused", "pool", name,
					"failures", connectGateFailures, "pause", connectGatePause)
			case to == gobreaker.StateClosed:
				log.Info("PostgreSQL connections work again", "pool", name)
			}
		},
	})
	pcfg.ConnConfig.DialFunc = g.attempt
	before := pcfg.BeforeConnect
	pcfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
		if before != nil {
			if err := before(ctx, cc); err != nil {
				return err
			}
		}
		g.perConnection(&cc.Config)
		return nil
	}
}

// connectGate is one pool's gate (see gateConnects).
type connectGate struct {
	cb   *gobreaker.TwoStepCircuitBreaker[struct{}]
	dial pgconn.DialFunc
}

// perConnection gives the connection cc configures a dial of its own: attempts until it is
// connected, cancel requests after. pgx copies a connection's config, closures included, so the
// copy its cancel requests dial through shares the flag.
func (g *connectGate) perConnection(cc *pgconn.Config) {
	var connected atomic.Bool
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if connected.Load() {
			return g.cancelRequest(ctx, network, addr)
		}
		return g.attempt(ctx, network, addr)
	}
	after := cc.AfterConnect
	cc.AfterConnect = func(ctx context.Context, c *pgconn.PgConn) error {
		connected.Store(true)
		if after != nil {
			return after(ctx, c)
		}
		return nil
	}
}

// attempt dials a new connection through the gate and reports its outcome to it.
func (g *connectGate) attempt(ctx context.Context, network, addr string) (net.Conn, error) {
	done, err := g.cb.Allow()
	if err != nil {
		return nil, errConnectPaused
	}
	conn, err := g.dial(ctx, network, addr)
	if err != nil {
		done(err)
		return nil, err
	}
	return &attemptConn{Conn: conn, done: done}, nil
}

// cancelRequest dials the connection a cancel request travels on: refused while the gate is
// paused, never counted (the server does not answer it, whatever its health).
func (g *connectGate) cancelRequest(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.cb.State() == gobreaker.StateOpen {
		return nil, errConnectPaused
	}
	return g.dial(ctx, network, addr)
}

// attemptConn reports its connection attempt's outcome to the gate once: the server answered,
// or the connection closed before it did.
type attemptConn struct {
	net.Conn
	once sync.Once
	done func(error)
}

func (c *attemptConn) settle(err error) { c.once.Do(func() { c.done(err) }) }

func (c *attemptConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.settle(nil)
	}
	return n, err
}

func (c *attemptConn) Close() error {
	c.settle(errClosedUnanswered)
	return c.Conn.Close()
}
