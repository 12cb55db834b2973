// Command oidcop is a real OpenID provider for the tests: zitadel/oidc's op package (discovery,
// authorize, token with PKCE S256 required, JWKS, userinfo) over an in-memory storage, with a plain
// HTML login form and a loopback-only JSON control API under /control/ (users, clients, key
// rotation, a tweak of the next ID token). testenv.StartOIDCProvider builds it once per test binary
// and runs it as a process of its own; its first line on stdout is the issuer URL.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("oidcop: %v", err)
	}
	issuer := "http://" + ln.Addr().String()
	store, err := newStore()
	if err != nil {
		log.Fatalf("oidcop: %v", err)
	}
	var cfg op.Config
	_, _ = rand.Read(cfg.CryptoKey[:])
	cfg.CodeMethodS256 = true
	cfg.AuthMethodPost = true
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Plain http on loopback: the tests' issuer is http://127.0.0.1:PORT.
	provider, err := op.NewProvider(&cfg, store, op.StaticIssuer(issuer), op.WithAllowInsecure(), op.WithLogger(logger))
	if err != nil {
		log.Fatalf("oidcop: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(loginPath, &loginForm{store: store, callback: op.AuthCallbackURL(provider)})
	mux.Handle("/control/", loopbackOnly(newControl(store)))
	mux.Handle("/", audienceTweak(store, provider))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// The first line on stdout is the issuer, for the parent that asked for port 0.
	fmt.Println(issuer)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("oidcop: %v", err)
	}
}
