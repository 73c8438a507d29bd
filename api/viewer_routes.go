package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/viewer"
)

// ViewerBackend is what the viewer's settings and logs pages need from the node.
type ViewerBackend interface {
	Settings(ctx context.Context) (apitype.ViewerSettings, error)
	// SaveSettings validates file (the whole settings.json object) with the node's own
	// Validate and writes it; an invalid file is memory.ErrInvalid with the reason.
	SaveSettings(ctx context.Context, file json.RawMessage) (apitype.ViewerSettings, error)
	Log(ctx context.Context, name string, lines int) (apitype.ViewerLog, error)
	// Keys and SetKey reach the AI key store; no answer ever holds a key.
	Keys(ctx context.Context) (apitype.ViewerKeys, error)
	SetKey(ctx context.Context, provider, key string) (apitype.ViewerKeys, error)
	// Facets lists the values the filters offer (projects, devices, platforms).
	Facets(ctx context.Context) (apitype.ViewerFacets, error)
	// FirstRun says which coding agents are hooked up and whether claude-mem's history is
	// on this machine (the empty feed's help).
	FirstRun(ctx context.Context) (apitype.ViewerFirstRun, error)
	// StartImport starts importing a coding agent's past sessions (one import at a time;
	// asking while one runs is memory.ErrInvalid); Import is its state.
	StartImport(ctx context.Context, platform string) (apitype.ViewerImport, error)
	Import(ctx context.Context) (apitype.ViewerImport, error)
	// Restart stops the node and starts it again; the viewer's sessions survive it.
	Restart(ctx context.Context) error
	// ReloadSettings reads settings.json again and applies what a running node can.
	ReloadSettings(ctx context.Context) (apitype.SettingsReload, error)
}

// statusEvery is how often the live stream sends the node's status (queue depth, workers).
const statusEvery = 2 * time.Second

func (s *Server) registerViewer(e *gin.Engine, g *gin.RouterGroup) {
	assets := viewer.Assets()
	files := http.FileServerFS(assets)
	index, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		panic(err) // embedded at build time
	}
	version, err := viewer.Version(assets)
	if err != nil {
		panic(err) // embedded at build time
	}
	// The page names its scripts and styles under /app/VERSION/ (their imports are
	// relative, so they stay there): cached for good, never asked again by a reload.
	versioned := "/app/" + version + "/"
	e.GET("/", s.index(bytes.ReplaceAll(index, []byte(`"/app/`), []byte(`"`+versioned))))
	e.GET("/app/*file", func(c *gin.Context) {
		if rest, ok := strings.CutPrefix(c.Request.URL.Path, versioned); ok {
			c.Header("Cache-Control", "private, max-age=31536000, immutable")
			c.Request.URL.Path = "/app/" + rest
		} else {
			c.Header("Cache-Control", "no-cache")
		}
		files.ServeHTTP(c.Writer, c.Request)
	})
	e.GET("/favicon.ico", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	e.GET("/login", s.login)
	g.POST("/viewer/code", s.bearerOnly, s.viewerCode)
	g.POST("/viewer/logout", s.logout)
	g.GET("/viewer/stream", s.stream)
	g.GET("/viewer/feed", s.viewerFeed)
	g.GET("/viewer/settings", s.viewerOn, s.getSettings)
	g.PUT("/viewer/settings", s.viewerOn, s.putSettings)
	g.GET("/viewer/logs", s.viewerOn, s.getLog)
	g.GET("/viewer/keys", s.viewerOn, s.getKeys)
	g.GET("/viewer/facets", s.viewerOn, s.getFacets)
	g.GET("/viewer/firstrun", s.viewerOn, s.getFirstRun)
	g.GET("/viewer/import", s.viewerOn, s.getImport)
	g.POST("/viewer/import", s.viewerOn, s.startImport)
	g.POST("/viewer/restart", s.viewerOn, s.restart)
	g.POST("/settings/reload", s.bearerOnly, s.viewerOn, s.reloadSettings)
	g.PUT("/viewer/keys/:provider", s.viewerOn, s.putKey)
}

// securityHeaders sets the viewer's strict headers on every answer, API and pages alike.
func (s *Server) securityHeaders(c *gin.Context) {
	viewer.SetSecurityHeaders(c.Writer.Header())
	c.Next()
}

// port is the TCP port the browser reaches (it names the cookies).
func (s *Server) port() int {
	_, p, _ := net.SplitHostPort(s.Addr())
	n, _ := strconv.Atoi(p)
	return n
}

// sessionOf returns the session cookie's value ("" without one).
func (s *Server) sessionOf(c *gin.Context) string {
	v, err := c.Cookie(viewer.SessionCookie(s.port()))
	if err != nil {
		return ""
	}
	return v
}

// browserAuth reports whether c carries a live viewer session and, for a state-changing
// method, the session's CSRF token in viewer.CSRFHeader.
func (s *Server) browserAuth(c *gin.Context) bool {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead:
		return s.viewerAuth.Check(s.sessionOf(c), "", false)
	}
	return s.viewerAuth.Check(s.sessionOf(c), c.GetHeader(viewer.CSRFHeader), true)
}

// bearerOnly keeps a route for the token holder (the CLI): a browser session cannot mint
// login codes.
func (s *Server) bearerOnly(c *gin.Context) {
	if c.GetBool(ctxBrowser) {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "this route needs the token"})
		return
	}
	c.Next()
}

func (s *Server) viewerOn(c *gin.Context) {
	if s.cfg.Viewer == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "the viewer's settings and logs are not served by this node"})
		return
	}
	c.Next()
}

func (s *Server) viewerCode(c *gin.Context) {
	if s.ln == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "the viewer needs the TCP port, which is off: " + errText(s.tcpErr)})
		return
	}
	code, exp := s.viewerAuth.NewCode()
	u := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port())), Path: "/login",
		RawQuery: url.Values{"code": {code}}.Encode()}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, apitype.ViewerCode{URL: u.String(), Expires: exp.Truncate(time.Second)})
}

// login redeems a one-time code: it sets the session and CSRF cookies and sends the browser
// to the viewer, so the code leaves the address bar (and history holds only a used code).
func (s *Server) login(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	id, csrf, err := s.viewerAuth.Redeem(c.Query("code"))
	if err != nil {
		c.Data(http.StatusForbidden, "text/plain; charset=utf-8", []byte(err.Error()+"\n"))
		return
	}
	port := s.port()
	http.SetCookie(c.Writer, &http.Cookie{Name: viewer.SessionCookie(port), Value: id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(viewer.DefaultSessionTTL / time.Second)})
	// The page reads the CSRF token from its cookie and repeats it in a header.
	http.SetCookie(c.Writer, &http.Cookie{Name: viewer.CSRFCookie(port), Value: csrf, Path: "/",
		SameSite: http.SameSiteStrictMode, MaxAge: int(viewer.DefaultSessionTTL / time.Second)})
	c.Redirect(http.StatusSeeOther, "/")
}

func (s *Server) logout(c *gin.Context) {
	s.viewerAuth.Logout(s.sessionOf(c))
	port := s.port()
	for _, name := range []string{viewer.SessionCookie(port), viewer.CSRFCookie(port)} {
		http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, SameSite: http.SameSiteStrictMode})
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// stream is the viewer's live feed (Server-Sent Events): a "change" event per commit of the
// change feed (local, synced, team, imported, forgotten), "resync" when the page fell
// behind and must reload its list, and "status" every statusEvery.
func (s *Server) stream(c *gin.Context) {
	if s.cfg.Feed == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "no change feed on this node"})
		return
	}
	sub := s.cfg.Feed.Subscribe(0)
	defer sub.Close()
	ctx := c.Request.Context()
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := w.Write([]byte("event: " + event + "\ndata: " + string(b) + "\n\n")); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	sendStatus := func() bool {
		st, err := s.cfg.Backend.Status(ctx)
		if err != nil {
			return send("status", gin.H{"error": err.Error()})
		}
		return send("status", st)
	}
	if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil || !sendStatus() {
		return
	}
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-tick.C:
			if !sendStatus() {
				return
			}
		case _, ok := <-sub.Ready():
			changes, overflowed := sub.Take()
			if overflowed && !send("resync", gin.H{}) {
				return
			}
			for _, ch := range changes {
				if !send("change", viewerChange(ch)) {
					return
				}
			}
			if !ok {
				return // the feed closed: the node is stopping
			}
		}
	}
}

// viewerFeed is one page of the live feed: /api/search's filters and order, answered with
// the full records (one round trip for the page's first paint instead of two).
func (s *Server) viewerFeed(c *gin.Context) {
	if s.parts().Search == nil {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "search is not served by this node"})
		return
	}
	q, ok := searchQuery(c)
	if !ok {
		return
	}
	page, err := s.feedPage(c.Request.Context(), q)
	if err != nil {
		s.searchError(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

func (s *Server) feedPage(ctx context.Context, q apitype.SearchQuery) (apitype.ViewerFeed, error) {
	res, err := s.parts().Search.Search(ctx, q)
	if err != nil {
		return apitype.ViewerFeed{}, err
	}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	page := apitype.ViewerFeed{Hits: len(res.Hits), Items: []apitype.Item{}}
	for len(ids) > 0 {
		n := min(len(ids), apitype.MaxGet)
		recs, err := s.parts().Search.Get(ctx, ids[:n])
		if err != nil {
			return apitype.ViewerFeed{}, err
		}
		page.Items = append(page.Items, recs.Items...)
		ids = ids[n:]
	}
	return page, nil
}

// index serves the viewer's page. A logged-in browser gets the feed's first page in it, as
// a JSON data block (type application/json: never run, and the CSP allows no inline
// script anyway), so the first cards need no request after the scripts load. Without a
// session, or when the page cannot be read, the page is the plain file and the script asks.
func (s *Server) index(page []byte) gin.HandlerFunc {
	head, body, _ := bytes.Cut(page, []byte("</head>"))
	return func(c *gin.Context) {
		c.Header("Cache-Control", "no-store")
		if s.parts().Search == nil || !s.viewerAuth.Check(s.sessionOf(c), "", false) {
			c.Data(http.StatusOK, "text/html; charset=utf-8", page)
			return
		}
		// The feed's first page as feed.js asks for it (no filter).
		first, err := s.feedPage(c.Request.Context(), apitype.SearchQuery{Order: "newest", Limit: viewer.FeedPage})
		if err != nil {
			c.Data(http.StatusOK, "text/html; charset=utf-8", page)
			return
		}
		// json.Marshal escapes <, > and &: no record can close the block.
		data, err := json.Marshal(first)
		if err != nil {
			c.Data(http.StatusOK, "text/html; charset=utf-8", page)
			return
		}
		out := make([]byte, 0, len(page)+len(data)+80)
		out = append(out, head...)
		out = append(out, `<script type="application/json" id="feed-first">`...)
		out = append(out, data...)
		out = append(out, "</script>\n</head>"...)
		out = append(out, body...)
		c.Data(http.StatusOK, "text/html; charset=utf-8", out)
	}
}

func viewerChange(ch feed.Change) apitype.ViewerChange {
	return apitype.ViewerChange{Seq: ch.Seq, Origin: ch.Origin.String(), Observations: ch.Observations,
		Summaries: ch.Summaries, Prompts: ch.Prompts, Sessions: ch.Sessions, Forgotten: ch.Forgotten}
}

func (s *Server) getSettings(c *gin.Context) {
	st, err := s.cfg.Viewer.Settings(c.Request.Context())
	s.reply(c, st, err)
}

func (s *Server) putSettings(c *gin.Context) {
	body, err := readBody(c.Request.Body)
	if tooLarge(c, err) {
		return
	}
	if err != nil || !json.Valid(body) {
		badRequest(c, "body must be the settings.json object")
		return
	}
	st, err := s.cfg.Viewer.SaveSettings(c.Request.Context(), body)
	s.reply(c, st, err)
}

func (s *Server) getFacets(c *gin.Context) {
	f, err := s.cfg.Viewer.Facets(c.Request.Context())
	s.reply(c, f, err)
}

// restart answers first, then the node goes down and comes back (the page polls until
// it answers again, with the same session).
func (s *Server) restart(c *gin.Context) {
	if err := s.cfg.Viewer.Restart(c.Request.Context()); err != nil {
		s.reply(c, nil, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"restarting": true})
}

func (s *Server) reloadSettings(c *gin.Context) {
	r, err := s.cfg.Viewer.ReloadSettings(c.Request.Context())
	s.reply(c, r, err)
}

func (s *Server) getFirstRun(c *gin.Context) {
	f, err := s.cfg.Viewer.FirstRun(c.Request.Context())
	s.reply(c, f, err)
}

func (s *Server) getImport(c *gin.Context) {
	st, err := s.cfg.Viewer.Import(c.Request.Context())
	s.reply(c, st, err)
}

func (s *Server) startImport(c *gin.Context) {
	var body struct {
		Platform string `json:"platform"`
	}
	if err := c.ShouldBindJSON(&body); err != nil || body.Platform == "" {
		badRequest(c, `body must be {"platform": "claude-code"} (an agent the first-run answer lists)`)
		return
	}
	st, err := s.cfg.Viewer.StartImport(c.Request.Context(), body.Platform)
	s.reply(c, st, err)
}

func (s *Server) getKeys(c *gin.Context) {
	k, err := s.cfg.Viewer.Keys(c.Request.Context())
	s.reply(c, k, err)
}

func (s *Server) putKey(c *gin.Context) {
	var body apitype.ViewerKey
	if err := c.ShouldBindJSON(&body); err != nil || body.Key == "" {
		badRequest(c, `body must be {"key": "…"}`)
		return
	}
	c.Header("Cache-Control", "no-store")
	k, err := s.cfg.Viewer.SetKey(c.Request.Context(), c.Param("provider"), body.Key)
	s.reply(c, k, err)
}

func (s *Server) getLog(c *gin.Context) {
	lines := 500
	if !intParam(c, "lines", &lines) {
		return
	}
	if lines < 1 || lines > 5000 {
		badRequest(c, "lines must be 1..5000")
		return
	}
	name := c.DefaultQuery("log", "node")
	if name != "node" && name != "hook" {
		badRequest(c, `log must be "node" or "hook"`)
		return
	}
	l, err := s.cfg.Viewer.Log(c.Request.Context(), name, lines)
	if errors.Is(err, fs.ErrNotExist) {
		c.JSON(http.StatusOK, apitype.ViewerLog{Name: name, Lines: []string{}})
		return
	}
	s.reply(c, l, err)
}

func errText(err error) string {
	if err == nil {
		return "the node listens on its socket only"
	}
	return err.Error()
}
