// Command fakes3 is a real S3 server for the tests: gofakes3 with its in-memory backend, speaking
// S3 over HTTP on -addr, so the S3 media store is tested through minio-go and a socket exactly as
// it talks to AWS S3 or MinIO. testenv.StartS3 builds it once per test binary and runs it as a
// process of its own. It checks no signatures: any credentials are accepted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("fakes3: %v", err)
	}
	s3 := gofakes3.New(s3mem.New(), gofakes3.WithTimeSkewLimit(time.Hour))
	srv := &http.Server{Handler: s3.Server(), ReadHeaderTimeout: 10 * time.Second}
	// The first line on stdout is the address, for the parent that asked for port 0.
	fmt.Println(ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("fakes3: %v", err)
	}
}
