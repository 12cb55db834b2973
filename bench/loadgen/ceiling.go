package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
)

// ceilingProfile and ceilingArticle mirror the shape of inkwell's single-article response, so the
// ceiling encodes a comparable JSON document (about 600 bytes) on every request, as the real
// handler does. They are deliberately a copy, not an import: the ceiling must not depend on inkwell.
type ceilingProfile struct {
	Username  string `json:"username"`
	Bio       string `json:"bio"`
	Image     string `json:"image"`
	Following bool   `json:"following"`
}

type ceilingArticle struct {
	Slug           string         `json:"slug"`
	Title          string         `json:"title"`
	Description    string         `json:"description"`
	Body           string         `json:"body"`
	TagList        []string       `json:"tagList"`
	CreatedAt      time.Time      `json:"createdAt"`
	UpdatedAt      time.Time      `json:"updatedAt"`
	Favorited      bool           `json:"favorited"`
	FavoritesCount int64          `json:"favoritesCount"`
	Author         ceilingProfile `json:"author"`
	Status         string         `json:"status"`
	Version        int32          `json:"version"`
	ReadsCount     int64          `json:"readsCount"`
	Collected      bool           `json:"collected"`
	CollectsCount  int64          `json:"collectsCount"`
}

type ceilingEnvelope struct {
	Article ceilingArticle `json:"article"`
}

// ceilingDoc is the fixed document GET /ceiling returns.
var ceilingDoc = func() ceilingEnvelope {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return ceilingEnvelope{Article: ceilingArticle{
		Slug:        "the-ceiling-of-this-machine",
		Title:       "The ceiling of this machine",
		Description: "A fixed article-shaped document served by bare gin, to compare the API against.",
		Body: "This document stands in for a cached article. It is encoded on every request, like the " +
			"real handler's response, but nothing else happens: no middleware, no Redis, no database. " +
			"Whatever this server reaches is the most HTTP plus gin can do here.",
		TagList:   []string{"bench", "ceiling", "gin"},
		CreatedAt: at, UpdatedAt: at,
		FavoritesCount: 3,
		Author:         ceilingProfile{Username: "ceiling", Bio: "", Image: ""},
		Status:         "published",
		Version:        1,
		ReadsCount:     42,
	}}
}()

// newCeilingEngine is bare gin: release mode, no middleware at all, one route.
func newCeilingEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/ceiling", func(c *gin.Context) { c.JSON(http.StatusOK, ceilingDoc) })
	return r
}

func ceilingMain(args []string) error {
	fs := flag.NewFlagSet("loadgen ceiling", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18090", "listen address (loopback only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoopbackAddr(*addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// The same server timeouts as inkwell (ioc.NewHTTPServer), so only the handler chain differs.
	srv := &http.Server{
		Handler:           newCeilingEngine(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "ceiling: serving GET /ceiling on http://%s\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
