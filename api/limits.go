package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Request body limits. Every route is bounded: a body is never read past its route's limit,
// and a declared Content-Length over it is refused before anything is read.
const (
	// MaxBodyBytes bounds the body of every route not listed in bodyLimits: ID lists,
	// notes, peer requests.
	MaxBodyBytes = 1 << 20
	// maxEventBytes bounds one event body; hooks cap their stdin well below this.
	maxEventBytes = 64 << 20
	// maxImportBytes bounds one import request; clients send large imports in batches.
	maxImportBytes = 64 << 20
	// maxSemanticBytes bounds the request: a prompt longer than this adds nothing to its
	// embedding (models truncate at a few hundred tokens).
	maxSemanticBytes = 256 << 10
)

// bodyLimits are the routes that accept more than MaxBodyBytes (or, for semantic, less).
var bodyLimits = map[string]int64{
	"/api/events":           maxEventBytes,
	"/api/events/batch":     maxEventBytes,
	"/api/import":           maxImportBytes,
	"/api/context/semantic": maxSemanticBytes,
}

func bodyLimit(route string) int64 {
	if n, ok := bodyLimits[route]; ok {
		return n
	}
	return MaxBodyBytes
}

// limitBody bounds the request body of every route.
func (s *Server) limitBody(c *gin.Context) {
	limit := bodyLimit(c.FullPath())
	if c.Request.ContentLength > limit {
		// Close the connection: the unread body is not drained.
		c.Header("Connection", "close")
		c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": tooLargeMessage(limit)})
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	}
	c.Next()
}

func tooLargeMessage(limit int64) string {
	if limit >= 1<<20 {
		return fmt.Sprintf("request body too large: this route takes at most %d MiB", limit>>20)
	}
	return fmt.Sprintf("request body too large: this route takes at most %d KiB", limit>>10)
}

// tooLarge answers 413 when err comes from reading past the body limit (a body sent
// without Content-Length); it reports whether it did.
func tooLarge(c *gin.Context, err error) bool {
	var mb *http.MaxBytesError
	if !errors.As(err, &mb) {
		return false
	}
	c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": tooLargeMessage(mb.Limit)})
	return true
}

// readBody reads the whole (already limited) request body. It collects the body in chunks
// and joins them only once it is complete, so a body that turns out to be over the limit
// never held more than the limit in memory — a json.Decoder's doubling buffer would hold
// up to twice that, and a streamed 65 MiB body could cost the node 200 MiB.
//
// Chunks start small and double up to 1 MiB: a hook event of a few hundred bytes costs one
// 4 KiB buffer, not a zeroed 1 MiB one (that cost ingest two thirds of its rate).
func readBody(r io.Reader) ([]byte, error) {
	const firstChunk, maxChunk = 4 << 10, 1 << 20
	var chunks [][]byte
	total := 0
	for size := firstChunk; ; size = min(2*size, maxChunk) {
		buf := make([]byte, size)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			chunks = append(chunks, buf[:n])
			total += n
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}
