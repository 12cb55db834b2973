package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// UploadDeadline bounds POST /api/uploads instead of INKWELL_REQUEST_TIMEOUT. An upload may wait
// for a decoding slot behind others (there is one per core): on two cores, sixteen 10 MB photos
// arriving at once take about half a minute to work through, and the last of them is as
// legitimate as the first. The connection's read and write deadlines move with it, so the
// server's ReadTimeout and WriteTimeout do not cut the answer short either.
const UploadDeadline = 2 * time.Minute

// longRoutes are the routes whose work may outlast the request timeout, with their own bound.
var longRoutes = map[string]time.Duration{
	http.MethodPost + " /api/uploads": UploadDeadline,
}

// requestDeadline bounds the work of every request (INKWELL_REQUEST_TIMEOUT): its context ends
// after timeout, so the PostgreSQL and Redis calls made for it stop (pgx cancels the statement,
// go-redis gives up the command) instead of going on for a client that has stopped waiting, and
// holding a connection meanwhile. The server's WriteTimeout alone would not: it closes the
// connection but leaves the handler running. Work that runs out of time answers 503 (writeError).
// The bound applies to all but the streams (streamRoutes, notification_stream.go), longRoutes with
// their own. Zero disables it.
func requestDeadline(timeout time.Duration) gin.HandlerFunc {
	if timeout <= 0 {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		if streamRoutes[c.Request.Method+" "+c.FullPath()] {
			c.Next() // a stream lives until its client, a revocation or shutdown ends it
			return
		}
		d := timeout
		if long, ok := longRoutes[c.Request.Method+" "+c.FullPath()]; ok && long > d {
			d = long
			// The server set the connection's deadlines from its own timeouts when the request
			// began; a wrapper that cannot move them leaves those (the work is then cut short by
			// them, as before, never left running).
			rc := http.NewResponseController(c.Writer)
			_ = rc.SetReadDeadline(time.Now().Add(d))
			_ = rc.SetWriteDeadline(time.Now().Add(d + 10*time.Second))
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}
