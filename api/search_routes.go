package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
)

// SearchBackend is what the search, memory and import/export routes need
// (search.Service implements it).
type SearchBackend interface {
	Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error)
	Timeline(ctx context.Context, q apitype.TimelineQuery) (apitype.Timeline, error)
	Get(ctx context.Context, ids []string) (apitype.Records, error)
	Forget(ctx context.Context, ids []string) (apitype.ForgetResult, error)
	SaveNote(ctx context.Context, n apitype.Note) (apitype.SaveResult, error)
	Correct(ctx context.Context, c apitype.Correction) (apitype.SupersedeResult, error)
	Supersede(ctx context.Context, req apitype.Supersede) (apitype.SupersedeResult, error)
	Pin(ctx context.Context, req apitype.Pin) (apitype.PinResult, error)
	Export(ctx context.Context, w io.Writer, project string) (int, error)
	Import(ctx context.Context, recs []importer.Record) (apitype.ImportResult, error)
}

var (
	_ SearchBackend = (*search.Service)(nil)
)

func (s *Server) registerSearch(g *gin.RouterGroup) {
	g = g.Group("", s.searchOn)
	g.GET("/search", s.search)
	g.GET("/timeline", s.timeline)
	g.POST("/records/batch", s.records)
	g.POST("/forget", s.forget)
	g.POST("/memories", s.saveNote)
	g.POST("/correct", s.correct)
	g.POST("/supersede", s.supersede)
	g.POST("/pin", s.pin)
	g.GET("/export", s.export)
	g.POST("/import", s.importRecords)
}

func (s *Server) searchOn(c *gin.Context) {
	if s.parts().Search == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "search is not served by this node"})
		return
	}
	c.Next()
}

// searchError maps the search and import sentinels to status codes.
func (s *Server) searchError(c *gin.Context, err error) {
	switch {
	case errors.Is(err, search.ErrInvalid), errors.Is(err, importer.ErrFormat), errors.Is(err, memory.ErrClockAhead):
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
	case errors.Is(err, search.ErrNotFound):
		c.JSON(http.StatusNotFound, gin.H{"error": err.Error()})
	case errors.Is(err, memory.ErrRecordTooLarge):
		c.JSON(http.StatusRequestEntityTooLarge, gin.H{"error": err.Error()})
	default:
		s.reply(c, nil, err)
	}
}

func badRequest(c *gin.Context, msg string) {
	c.JSON(http.StatusBadRequest, gin.H{"error": msg})
}

// intParam reads an optional integer query parameter.
func intParam(c *gin.Context, name string, dst *int) bool {
	v := c.Query(name)
	if v == "" {
		return true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		badRequest(c, name+" must be an integer")
		return false
	}
	*dst = n
	return true
}

// platformParam is the platform filter: platform, or claude-mem's platformSource, with
// claude-mem's "claude" read as claude-code.
func platformParam(c *gin.Context) string {
	p := c.Query("platform")
	if p == "" {
		p = c.Query("platformSource")
	}
	return memory.PlatformName(p)
}

// searchQuery reads /api/search's query parameters (apitype's one codec); it answers 400
// itself when one is bad.
func searchQuery(c *gin.Context) (apitype.SearchQuery, bool) {
	q, err := apitype.ParseSearchQuery(c.Request.URL.Query())
	if err != nil {
		badRequest(c, err.Error())
		return q, false
	}
	return q, true
}

func (s *Server) search(c *gin.Context) {
	q, ok := searchQuery(c)
	if !ok {
		return
	}
	res, err := s.parts().Search.Search(c.Request.Context(), q)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) timeline(c *gin.Context) {
	q := apitype.TimelineQuery{Anchor: c.Query("anchor"), Query: c.Query("query"), Project: c.Query("project"), Device: c.Query("device"),
		Platform: platformParam(c), Type: c.Query("type"), ObsTypes: apitype.SplitList(c.Query("obs_type"))}
	if !intParam(c, "before", &q.Before) || !intParam(c, "after", &q.After) {
		return
	}
	tl, err := s.parts().Search.Timeline(c.Request.Context(), q)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, tl)
}

// bindIDs reads an {"ids": […]} body; on a bad or oversized body it has answered the
// request and reports false.
func bindIDs(c *gin.Context) (apitype.IDs, bool) {
	var body apitype.IDs
	if err := c.ShouldBindJSON(&body); err != nil {
		if !tooLarge(c, err) {
			badRequest(c, `body must be {"ids": ["…"]}`)
		}
		return body, false
	}
	return body, true
}

func (s *Server) records(c *gin.Context) {
	body, ok := bindIDs(c)
	if !ok {
		return
	}
	recs, err := s.parts().Search.Get(c.Request.Context(), body.IDs)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, recs)
}

func (s *Server) forget(c *gin.Context) {
	body, ok := bindIDs(c)
	if !ok {
		return
	}
	res, err := s.parts().Search.Forget(c.Request.Context(), body.IDs)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) saveNote(c *gin.Context) {
	var n apitype.Note
	if err := c.ShouldBindJSON(&n); err != nil {
		if tooLarge(c, err) {
			return
		}
		badRequest(c, `body must be {"text": "…", "project": "…", "title": "…", "type": "…"}`)
		return
	}
	res, err := s.parts().Search.SaveNote(c.Request.Context(), n)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) correct(c *gin.Context) {
	bindAndCall(s, c, `body must be {"id": "…", "text": "what is true"}`, s.parts().Search.Correct)
}

func (s *Server) supersede(c *gin.Context) {
	bindAndCall(s, c, `body must be {"old": "…", "new": "…"}`, s.parts().Search.Supersede)
}

func (s *Server) pin(c *gin.Context) {
	bindAndCall(s, c, `body must be {"id": "…", "pinned": true|false}`, s.parts().Search.Pin)
}

// bindAndCall answers a route whose JSON body is a B and whose answer fn gives: usage is
// the 400 answer for a body that does not decode.
func bindAndCall[B, R any](s *Server, c *gin.Context, usage string, fn func(context.Context, B) (R, error)) {
	var body B
	if err := c.ShouldBindJSON(&body); err != nil {
		if !tooLarge(c, err) {
			badRequest(c, usage)
		}
		return
	}
	res, err := fn(c.Request.Context(), body)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) export(c *gin.Context) {
	c.Header("Content-Type", "application/x-ndjson")
	c.Status(http.StatusOK)
	// Headers are gone once the first line is written: a failure mid-stream can only
	// cut the stream short, which the reader sees as a missing trailer line.
	n, err := s.parts().Search.Export(c.Request.Context(), c.Writer, c.Query("project"))
	if err != nil {
		s.log.Error("export failed", "records", n, "err", err)
		return
	}
	// The trailer tells the client the stream is complete.
	_ = json.NewEncoder(c.Writer).Encode(apitype.ExportEnd{Kind: "end", Count: n})
}

func (s *Server) importRecords(c *gin.Context) {
	rd := importer.NewReader(c.Request.Body) // bounded by limitBody
	var recs []importer.Record
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if tooLarge(c, err) {
			return
		}
		if err != nil {
			s.searchError(c, err)
			return
		}
		recs = append(recs, rec)
	}
	res, err := s.parts().Search.Import(c.Request.Context(), recs)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
