package web

import (
	"context"
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

// WriteRecorder records that a user has just written, so their next reads, on any instance, see
// it even through a lagging read replica (repository/pg.ReadRouter).
type WriteRecorder interface {
	Wrote(ctx context.Context, userID int64) error
}

// ctxReplicaReads marks a request served while read replicas are in use: the authenticator then
// names the reader in the request's context (domain.WithReader), which the reads route by.
const ctxReplicaReads = "inkwell.replicaReads"

// readYourWrites is installed only when read replicas are configured. A request that may write
// (any method but GET, HEAD, OPTIONS) by a signed-in user that succeeds has its write recorded
// before the first byte of its answer leaves: a client that has the answer can count on the
// write on its next read, wherever that lands. A recording that fails is logged; the reads of
// this instance still honour it, and other instances read the primary while they cannot ask
// Redis.
func readYourWrites(rec WriteRecorder, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Set(ctxReplicaReads, true)
		if isReadMethod(c.Request.Method) {
			c.Next()
			return
		}
		// A request that writes reads only the primary: what it reads after its own write must
		// include it, and its mark is recorded only as its answer leaves.
		c.Request = c.Request.WithContext(domain.WithPrimaryReads(c.Request.Context()))
		w := &markingWriter{ResponseWriter: c.Writer, c: c, rec: rec, log: log}
		c.Writer = w
		c.Next()
		w.mark() // an answer without a body (204) is written by gin after the handlers return
	}
}

// markingWriter records the request's write before the answer's first byte.
type markingWriter struct {
	gin.ResponseWriter
	c      *gin.Context
	rec    WriteRecorder
	log    *slog.Logger
	marked bool
}

func (w *markingWriter) mark() {
	if w.marked {
		return
	}
	w.marked = true
	user := viewerID(w.c)
	if user == 0 || w.ResponseWriter.Status() >= 400 {
		return
	}
	if err := w.rec.Wrote(context.WithoutCancel(w.c.Request.Context()), user); err != nil {
		w.log.WarnContext(w.c.Request.Context(), "recording a write for read-your-writes failed; other instances read this user's data from the primary while Redis cannot say", "err", err)
	}
}

func (w *markingWriter) WriteHeaderNow() { w.mark(); w.ResponseWriter.WriteHeaderNow() }

func (w *markingWriter) Write(b []byte) (int, error) { w.mark(); return w.ResponseWriter.Write(b) }

func (w *markingWriter) WriteString(s string) (int, error) {
	w.mark()
	return w.ResponseWriter.WriteString(s)
}

func (w *markingWriter) Flush() { w.mark(); w.ResponseWriter.Flush() }

// readerContext names the signed-in reader in the request's context when replicas are in use.
func readerContext(c *gin.Context, userID int64) {
	if c.GetBool(ctxReplicaReads) {
		c.Request = c.Request.WithContext(domain.WithReader(c.Request.Context(), userID))
	}
}
