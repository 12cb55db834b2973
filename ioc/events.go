package ioc

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

// Worker is a long-running background task; Run returns when its context ends.
type Worker interface {
	Run(ctx context.Context) error
}

// Workers are the background tasks the App runs beside the HTTP server.
type Workers []Worker

// ReadStream is the key of the read-event stream.
type ReadStream string

// NewReadStream returns the stream key under the instance's prefix.
func NewReadStream(ks cache.Keyspace) ReadStream { return ReadStream(ks.Key("stream", "reads")) }

// NewReadPublisher returns the publisher that takes read events off the request path.
func NewReadPublisher(cfg *Config, rdb redis.UniversalClient, stream ReadStream, log *slog.Logger) *events.Publisher {
	return events.NewPublisher(rdb, events.PublisherConfig{
		Stream: string(stream), Buffer: cfg.ReadBuffer, BatchSize: cfg.ReadPublishBatch, FlushEvery: cfg.ReadPublishFlush,
	}, log)
}

// NewWorkers returns every background task: the read-event publisher, its two consumer groups,
// the stream trimmer, the article preloader, and the durable (Postgres-backed) work.
func NewWorkers(cfg *Config, rdb redis.UniversalClient, stream ReadStream, pub *events.Publisher, reads *service.ReadService, durable Durable, preload *job.Preloader, log *slog.Logger) Workers {
	consumer := func(group string, h events.Handler) *events.Consumer {
		return events.NewConsumer(rdb, events.ConsumerConfig{
			Stream: string(stream), Group: group, Name: consumerName(),
			BatchSize: cfg.ConsumerBatch, BatchWait: cfg.ConsumerWait,
			ClaimIdle: cfg.ConsumerClaimIdle, ClaimEvery: cfg.ConsumerClaimTick,
		}, h, log)
	}
	ws := append(Workers{
		pub,
		consumer(job.GroupReadCount, job.ReadCountHandler(reads, log)),
		consumer(job.GroupReadHistory, job.ReadHistoryHandler(reads, log)),
		events.NewTrimmer(rdb, string(stream), []string{job.GroupReadCount, job.GroupReadHistory},
			int64(cfg.StreamMaxLen), cfg.StreamTrimEvery, log),
		preload,
	}, durable...)
	if cfg.PprofAddr != "" {
		ws = append(ws, pprofServer{addr: cfg.PprofAddr, log: log})
	}
	return ws
}

// consumerName is unique per process, so two instances never share pending entries by accident.
func consumerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.IntN(1<<16))
}
