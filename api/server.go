// Package api is the node's HTTP interface — on the data dir's Unix socket and on
// 127.0.0.1 — for hook ingestion, context, search, peers and status, behind a bearer token.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/viewer"
)

// CorruptMessage is the one line a request refused for a corrupt database answers with.
const CorruptMessage = "memnode's database is corrupt: nothing more is written to it; stop the node ('memnode stop') and run 'memnode repair'"

// Backend is what the core routes need from the node. Status answers also while Ready is
// false (before the database is open it may fail; once the database is found corrupt it
// says so).
type Backend interface {
	Ready() bool
	Ingest(ctx context.Context, ev apitype.Event) (apitype.EventReply, error)
	Context(ctx context.Context, project, sessionID string) (apitype.Context, error)
	ObservationsByFile(ctx context.Context, project string, paths []string, limit int) ([]apitype.FileObservation, error)
	Status(ctx context.Context) (apitype.Status, error)
}

// Config configures a Server.
type Config struct {
	// Addr to listen on; must be a loopback address ("127.0.0.1:38800").
	Addr string
	// Socket is the Unix socket to listen on as well (localnet.SocketPath). When set, a TCP
	// port taken by another program does not stop the server: it serves the socket, and
	// TCPError says why TCP is off.
	Socket  string
	Token   string
	Version string
	Backend Backend
	// Search, Peers and Team, when known at New, are served from the start; a node hands
	// them over later, all at once, with SetBackends.
	Search SearchBackend // optional
	Peers  PeerBackend   // optional
	// Feed is the change feed the viewer's live stream follows (optional).
	Feed *feed.Bus
	// Viewer serves the viewer's settings and logs pages (optional).
	Viewer ViewerBackend
	// ViewerAuth holds the viewer's login codes and sessions; nil means a fresh one.
	ViewerAuth *viewer.Auth
	// Team is team memory (optional).
	Team   TeamBackend
	Logger *slog.Logger
}

// Server serves the API. New → Start → Close.
type Server struct {
	cfg    Config
	engine *gin.Engine
	srv    *http.Server
	ln     net.Listener
	tcpErr error
	log    *slog.Logger
	wg     sync.WaitGroup
	once   sync.Once
	// viewerAuth holds the browser sessions; closing ends the live streams at Close (they
	// never go idle, so Shutdown alone would wait for them until its deadline).
	viewerAuth *viewer.Auth
	closing    chan struct{}
	// injected is the file-context ledger: a file's history once per session.
	injected fileLedger
	// backends are the parts served behind Backend (Config's, then SetBackends').
	backends atomic.Pointer[Backends]
}

// Backends are the parts a node starts after its server listens (they need the database):
// handed over in one SetBackends call once they run. Until then, and for a part that is
// nil, its routes answer 503 — with the start error when one is given.
type Backends struct {
	Search SearchBackend
	Peers  PeerBackend // nil: device sync is off (PeersErr nil) or failed to start
	Team   TeamBackend // nil: team memory is not available (TeamErr nil) or failed to start
	// PeersErr and TeamErr are why device sync or team memory did not start.
	PeersErr, TeamErr error
}

// SetBackends hands the server the parts it serves from now on; it may be called at any
// time, from any goroutine (requests in flight keep the parts they started with).
func (s *Server) SetBackends(b Backends) { s.backends.Store(&b) }

// parts are the parts served now.
func (s *Server) parts() *Backends { return s.backends.Load() }

// ErrNotLoopback is returned for a listen address outside 127.0.0.0/8 or ::1.
var ErrNotLoopback = errors.New("api: listen address must be loopback")

// New builds the routes. The caller must have put gin in release mode (it is a process-wide
// setting; cmd/memnode does it) so nothing is printed to stdout.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil || cfg.Token == "" {
		return nil, errors.New("api: backend and token are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ViewerAuth == nil {
		cfg.ViewerAuth = viewer.NewAuth(viewer.Config{})
	}
	s := &Server{cfg: cfg, log: cfg.Logger, viewerAuth: cfg.ViewerAuth, closing: make(chan struct{})}
	s.SetBackends(Backends{Search: cfg.Search, Peers: cfg.Peers, Team: cfg.Team})
	e := gin.New()
	e.Use(gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, rec any) {
		s.log.Error("panic in handler", "path", c.FullPath(), "panic", fmt.Sprint(rec))
		c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
	}))
	e.Use(s.checkHost)
	e.Use(s.securityHeaders)
	e.Use(s.limitBody)
	e.GET("/health", s.health)
	g := e.Group("/api", s.auth, s.ready)
	g.POST("/events", s.postEvent)
	g.POST("/events/batch", s.postEvents)
	g.GET("/context", s.getContext)
	g.GET("/observations/by-file", s.byFile)
	// Status answers also when the node is not ready because its database is corrupt: it
	// is how the user learns what to do.
	e.GET("/api/status", s.auth, s.status)
	s.registerSearch(g)
	s.registerSemantic(g)
	s.registerPeers(g)
	s.registerViewer(e, g)
	s.registerTeam(g)
	s.engine = e
	return s, nil
}

// Handler exposes the routes (tests use httptest).
func (s *Server) Handler() http.Handler { return s.engine }

// Start listens and serves in the background. It fails at once if the socket cannot be
// made, or, without a socket, if the port is taken.
func (s *Server) Start() error {
	host, _, err := net.SplitHostPort(s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("api listen %q: %w", s.cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ErrNotLoopback
	}
	var lns []net.Listener
	if s.cfg.Socket != "" {
		uln, err := localnet.ListenUnix(s.cfg.Socket, s.log)
		if err != nil {
			return fmt.Errorf("api: %w", err)
		}
		lns = append(lns, uln)
	}
	// The TCP port is reachable by every local user: its listener refuses other uids'
	// connections before reading them (the socket checks SO_PEERCRED the same way).
	ln, err := localnet.ListenTCP(s.cfg.Addr, s.log)
	switch {
	case err == nil:
		s.ln = ln
		lns = append(lns, ln)
	case s.cfg.Socket == "":
		return fmt.Errorf("api listen: %w", err)
	default:
		// Hooks, CLI and MCP use the socket; a squatted port costs only TCP clients.
		s.tcpErr = fmt.Errorf("port %s is taken by another program: %w", s.cfg.Addr, err)
		s.log.Warn("tcp listener off; serving the unix socket only", "err", s.tcpErr)
	}
	s.srv = &http.Server{Handler: s.engine, ReadHeaderTimeout: 10 * time.Second}
	for _, l := range lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("api server stopped", "err", err)
			}
		}()
	}
	return nil
}

// TCPError says why the TCP listener is off (nil when it listens).
func (s *Server) TCPError() error { return s.tcpErr }

// Addr returns the bound TCP address (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Addr
	}
	return s.ln.Addr().String()
}

// Close stops accepting, waits for in-flight requests (bounded by ctx), and returns.
// It is idempotent.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		close(s.closing)
		if s.srv != nil {
			err = s.srv.Shutdown(ctx)
		}
		s.wg.Wait()
	})
	return err
}

// ctxBrowser marks a request authenticated by a viewer session rather than the token.
const ctxBrowser = "memnode.browser"

// auth lets in the token holder (CLI, hooks, MCP, scripts: Authorization: Bearer) and the
// viewer's browser sessions (session cookie; on state-changing methods the CSRF header too).
func (s *Server) auth(c *gin.Context) {
	h := c.GetHeader("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) != 1 {
			c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "missing or wrong token (see <data dir>/token)"})
			return
		}
		c.Next()
		return
	}
	if s.sessionOf(c) != "" {
		if !s.browserAuth(c) {
			c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "viewer session expired or CSRF token missing (reload, or run memnode viewer again)"})
			return
		}
		c.Set(ctxBrowser, true)
		c.Next()
		return
	}
	c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "missing or wrong token (see <data dir>/token)"})
}

func (s *Server) ready(c *gin.Context) {
	if !s.cfg.Backend.Ready() {
		c.Header("Retry-After", "1")
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "not ready"})
		return
	}
	c.Next()
}

// health names nothing about the user (no data dir): any local program may ask. The proof
// (localnet.ProofHeader) answers a client's challenge.
func (s *Server) health(c *gin.Context) {
	if ch := c.GetHeader(localnet.ChallengeHeader); ch != "" {
		if !localnet.ValidChallenge(ch) {
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": "bad challenge"})
			return
		}
		c.Header(localnet.ProofHeader, localnet.Proof(s.cfg.Token, ch))
	}
	h := apitype.Health{Status: "ok", Ready: s.cfg.Backend.Ready(), PID: os.Getpid(), Version: s.cfg.Version, API: apitype.Version}
	if sp, ok := s.cfg.Backend.(startPhaser); ok {
		h.Phase, h.Steps, h.Unbounded = sp.StartPhase()
	}
	c.JSON(http.StatusOK, h)
}

// startPhaser is a Backend that says what its start does now (node.Node.StartPhase).
type startPhaser interface {
	StartPhase() (phase string, steps uint64, unbounded bool)
}

// checkHost refuses requests a web page could make (DNS rebinding, cross-site requests):
// the Host must be a loopback name, and an Origin, when sent, must be the node's own.
func (s *Server) checkHost(c *gin.Context) {
	if !loopbackHost(c.Request.Host) {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "forbidden host"})
		return
	}
	if o := c.GetHeader("Origin"); o != "" && !s.ownOrigin(o) {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "forbidden origin"})
		return
	}
	c.Next()
}

// LoopbackOnly wraps a handler that serves no web page (the --pprof server): a request
// whose Host is not a loopback name, or that carries any Origin, gets 403.
func LoopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) || r.Header.Get("Origin") != "" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback: a loopback
// name or address, optionally with a decimal port ("127.0.0.1:38800.evil.example" is not).
func loopbackHost(h string) bool {
	host := h
	if hh, port, err := net.SplitHostPort(h); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		host = hh
	} else if strings.Count(h, ":") == 1 || strings.HasPrefix(h, "[") && !strings.HasSuffix(h, "]") {
		return false // a malformed host:port
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ownOrigin reports whether o is the origin of a page the node serves itself.
func (s *Server) ownOrigin(o string) bool {
	_, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return false
	}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if o == "http://"+h+":"+port {
			return true
		}
	}
	return false
}

func (s *Server) postEvent(c *gin.Context) {
	var ev apitype.Event
	// Read, then decode: gin's binding adds a validation pass over a struct with no rules,
	// and a streaming decoder's buffer would grow to twice the limit (see readBody).
	body, err := readBody(c.Request.Body)
	if tooLarge(c, err) {
		return
	}
	if err == nil {
		err = json.Unmarshal(body, &ev)
	}
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "bad event: " + err.Error()})
		return
	}
	rep, err := s.cfg.Backend.Ingest(c.Request.Context(), ev)
	s.reply(c, rep, err)
}

func (s *Server) postEvents(c *gin.Context) {
	var evs []apitype.Event
	body, err := readBody(c.Request.Body)
	if tooLarge(c, err) {
		return
	}
	if err == nil {
		err = json.Unmarshal(body, &evs)
	}
	if err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "bad events: " + err.Error()})
		return
	}
	replies := make([]apitype.EventReply, 0, len(evs))
	for _, ev := range evs {
		rep, err := s.cfg.Backend.Ingest(c.Request.Context(), ev)
		if errors.Is(err, memory.ErrInvalid) {
			rep = apitype.EventReply{OK: false, Status: "rejected", Reason: err.Error()}
		} else if err != nil {
			s.log.Error("ingest failed", "err", err)
			c.JSON(http.StatusInternalServerError, gin.H{"error": "ingest failed", "stored": len(replies)})
			return
		}
		replies = append(replies, rep)
	}
	c.JSON(http.StatusOK, gin.H{"replies": replies})
}

func (s *Server) reply(c *gin.Context, v any, err error) {
	switch {
	case err == nil:
		c.JSON(http.StatusOK, v)
	case errors.Is(err, memory.ErrStorageFull):
		c.JSON(http.StatusInsufficientStorage, gin.H{"error": "disk full: memnode cannot keep new events until space is freed in its data dir"})
	case errors.Is(err, memory.ErrInvalid):
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
	case errors.Is(err, memory.ErrCorrupt):
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": CorruptMessage})
	default:
		s.log.Error("request failed", "path", c.FullPath(), "err", err)
		c.JSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
	}
}

func (s *Server) getContext(c *gin.Context) {
	project := c.Query("project")
	if project == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "project is required"})
		return
	}
	res, err := s.cfg.Backend.Context(c.Request.Context(), project, c.Query("session_id"))
	if err != nil {
		s.reply(c, nil, err)
		return
	}
	if c.Query("format") == "json" {
		c.JSON(http.StatusOK, res)
		return
	}
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(res.Text))
}

func (s *Server) byFile(c *gin.Context) {
	paths := c.QueryArray("path")
	project := c.Query("project")
	if len(paths) == 0 || project == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "path and project are required"})
		return
	}
	limit := 40
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			c.JSON(http.StatusBadRequest, gin.H{"error": "limit must be 1..500"})
			return
		}
		limit = n
	}
	if cwd := c.Query("cwd"); cwd != "" {
		// Observations store paths relative to the project's working dir when inside it.
		for _, p := range paths {
			if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(cwd, "/")+"/"); ok {
				paths = append(paths, rel)
			}
		}
	}
	// With a session, a file's history is answered once in it (the ledger): the hook asks
	// again on every read, and the agent has it in its context already.
	session, file := c.Query("session_id"), paths[0]
	if session != "" && s.injected.has(session, file) {
		c.JSON(http.StatusOK, apitype.FileObservations{Observations: []apitype.FileObservation{}, Repeat: true})
		return
	}
	obs, err := s.cfg.Backend.ObservationsByFile(c.Request.Context(), project, paths, limit)
	if err != nil {
		s.reply(c, nil, err)
		return
	}
	if obs == nil {
		obs = []apitype.FileObservation{}
	}
	if session != "" && len(obs) > 0 && !s.injected.first(session, file) {
		// another hook of the session got it meanwhile
		c.JSON(http.StatusOK, apitype.FileObservations{Observations: []apitype.FileObservation{}, Repeat: true})
		return
	}
	c.JSON(http.StatusOK, apitype.FileObservations{Observations: obs})
}

func (s *Server) status(c *gin.Context) {
	st, err := s.cfg.Backend.Status(c.Request.Context())
	if err != nil && !s.cfg.Backend.Ready() && !errors.Is(err, memory.ErrCorrupt) {
		c.Header("Retry-After", "1")
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": "not ready"})
		return
	}
	s.reply(c, st, err)
}
