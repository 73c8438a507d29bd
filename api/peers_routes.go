package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	memsync "github.com/memnode/memnode/sync"
)

// PeerBackend is the device group as the peers routes use it; *sync.Node satisfies it.
type PeerBackend interface {
	Status(ctx context.Context) (memsync.Status, error)
	Invite(ttl time.Duration) (string, error)
	Join(ctx context.Context, code string) error
	Remove(ctx context.Context, device string) (memsync.Member, error)
	Leave(ctx context.Context) error
}

var _ PeerBackend = (*memsync.Node)(nil)

// InviteRequest / InviteReply are the body and answer of POST /api/peers/invite. The code is
// a secret: it is returned once to the local CLI and never logged.
type InviteRequest struct {
	TTL string `json:"ttl,omitempty"` // Go duration, default 10m
}

type InviteReply struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expires"`
}

// JoinRequest is the body of POST /api/peers/join.
type JoinRequest struct {
	Code string `json:"code"`
}

// RemoveRequest is the body of POST /api/peers/remove.
type RemoveRequest struct {
	Device string `json:"device"`
}

func (s *Server) registerPeers(g *gin.RouterGroup) {
	p := g.Group("/peers", s.peersOn)
	p.GET("", s.peersStatus)
	p.POST("/invite", s.peersInvite)
	p.POST("/join", s.peersJoin)
	p.POST("/remove", s.peersRemove)
	p.POST("/leave", s.peersLeave)
}

func (s *Server) peersOn(c *gin.Context) {
	if p := s.parts(); p.Peers == nil {
		msg := "device sync is off on this node"
		if p.PeersErr != nil {
			msg = "device sync failed to start: " + p.PeersErr.Error()
		}
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": msg})
		return
	}
	c.Next()
}

func (s *Server) peersStatus(c *gin.Context) {
	st, err := s.parts().Peers.Status(c.Request.Context())
	s.peersReply(c, st, err)
}

func (s *Server) peersInvite(c *gin.Context) {
	var req InviteRequest
	if c.Request.ContentLength != 0 {
		if err := c.ShouldBindJSON(&req); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"ttl\": \"10m\"}"})
			return
		}
	}
	ttl := memsync.DefaultInviteTTL
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		if err != nil || d <= 0 || d > memsync.MaxInviteTTL {
			c.JSON(http.StatusBadRequest, gin.H{"error": "ttl must be a duration between 1s and 24h, like 10m"})
			return
		}
		ttl = d
	}
	code, err := s.parts().Peers.Invite(ttl)
	if err != nil {
		s.peersReply(c, nil, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, InviteReply{Code: code, Expires: time.Now().Add(ttl).Truncate(time.Second)})
}

func (s *Server) peersJoin(c *gin.Context) {
	var req JoinRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Code == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"code\": \"MN1…\"}"})
		return
	}
	err := s.parts().Peers.Join(c.Request.Context(), req.Code)
	s.peersReply(c, gin.H{"joined": err == nil}, err)
}

func (s *Server) peersRemove(c *gin.Context) {
	var req RemoveRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Device == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"device\": \"name or peer ID\"}"})
		return
	}
	m, err := s.parts().Peers.Remove(c.Request.Context(), req.Device)
	s.peersReply(c, m, err)
}

func (s *Server) peersLeave(c *gin.Context) {
	err := s.parts().Peers.Leave(c.Request.Context())
	s.peersReply(c, gin.H{"left": err == nil}, err)
}

// peersReply maps sync's sentinel errors to statuses; anything else goes to reply. The
// error texts never contain a code or a key (sync guarantees it), so they are safe to
// return to the local CLI.
func (s *Server) peersReply(c *gin.Context, v any, err error) {
	var status int
	switch {
	case err == nil:
	case errors.Is(err, memsync.ErrInviteMalformed), errors.Is(err, memsync.ErrInviteExpired), errors.Is(err, memsync.ErrRemoveSelf),
		errors.Is(err, memsync.ErrOwnInvite):
		status = http.StatusBadRequest
	case errors.Is(err, memsync.ErrInviteRejected):
		status = http.StatusForbidden
	case errors.Is(err, memsync.ErrUnknownPeer):
		status = http.StatusNotFound
	case errors.Is(err, memsync.ErrAlreadyInGroup), errors.Is(err, memsync.ErrAmbiguousDevice), errors.Is(err, memsync.ErrNotInGroup),
		errors.Is(err, memsync.ErrCrossJoin):
		status = http.StatusConflict
	case errors.Is(err, memsync.ErrInviterUnreachable):
		status = http.StatusBadGateway
	case errors.Is(err, memsync.ErrNotStarted), errors.Is(err, memsync.ErrClosed):
		status = http.StatusServiceUnavailable
	}
	if status == 0 {
		s.reply(c, v, err)
		return
	}
	c.JSON(status, gin.H{"error": err.Error()})
}
