package ioc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

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
func gateConnects(pcfg *pgxpool.Config, name string, log *slog.Logger) {
	cb := gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
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
	dial := pcfg.ConnConfig.DialFunc
	pcfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		done, err := cb.Allow()
		if err != nil {
			return nil, errConnectPaused
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			done(err)
			return nil, err
		}
		return &attemptConn{Conn: conn, done: done}, nil
	}
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
