package pg_test

import (
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// BenchmarkReadRouter_For is the routing's own cost per read, on a replica that has caught up:
// an anonymous reader (positions compared in process), a signed-in reader's first read of a
// request (plus a GET of their write mark from Redis) and their later reads of the same request
// (the mark is looked up once per request).
//
//	go test -run '^$' -bench BenchmarkReadRouter_For ./repository/pg/
func BenchmarkReadRouter_For(b *testing.B) {
	db := testenv.NewReplicatedDB(b)
	e := startRouter(b, db, routerOpts{})
	testenv.WaitUntil(b, "the replica in the rotation", func() bool { return e.servedByReplica(b.Context()) })
	for _, tc := range []struct {
		name       string
		reader     int64
		newRequest bool
	}{{"anonymous", 0, false}, {"signed-in, first read of a request", 42, true}, {"signed-in, later reads", 42, false}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := domain.WithReader(b.Context(), tc.reader)
			before := e.router.Stats.Replica.Load()
			for b.Loop() {
				if tc.newRequest {
					ctx = domain.WithReader(b.Context(), tc.reader)
				}
				e.router.For(ctx)
			}
			b.ReportMetric(float64(e.router.Stats.Replica.Load()-before)/float64(b.N), "replica-share")
		})
	}
}
