package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/team"
)

// TeamBackend is team memory as the team routes use it; *team.Team satisfies it.
type TeamBackend interface {
	Join(ctx context.Context, req team.JoinRequest) (team.JoinInfo, error)
	Share(ctx context.Context, project string) error
	Unshare(ctx context.Context, project string) error
	Status(ctx context.Context) (team.Status, error)
	Leave(ctx context.Context, purge bool) (int, error)
	Search(ctx context.Context, query, project string, limit int) ([]team.Hit, error)
	Admin(ctx context.Context, add bool, who string) (team.AdminChange, error)
	Remove(ctx context.Context, who string) (team.AdminChange, error)
}

var _ TeamBackend = (*team.Team)(nil)

// TeamJoinRequest is the body of POST /api/team/join. The password reaches the node only
// over the local API (socket in the 0700 data dir, bearer token) and is never logged.
type TeamJoinRequest struct {
	URLs     []string `json:"urls"`
	User     string   `json:"user"`
	Password string   `json:"password"`
	Name     string   `json:"name,omitempty"`
	// CACert is the PEM certificate of the CA that signed the cluster's HTTPS certificates
	// (team join --ca-cert FILE); empty: the system's roots.
	CACert string `json:"ca_cert,omitempty"`
}

// TeamProjectRequest is the body of POST /api/team/share and /api/team/unshare.
type TeamProjectRequest struct {
	Project string `json:"project"`
}

// TeamAdminRequest is the body of POST /api/team/admin: Action "add" or "remove", Device
// "@user/device" or a device ID.
type TeamAdminRequest struct {
	Action string `json:"action"`
	Device string `json:"device"`
}

// TeamRemoveRequest is the body of POST /api/team/remove: Device "@user/device" or a
// device ID.
type TeamRemoveRequest struct {
	Device string `json:"device"`
}

// TeamLeaveRequest is the body of POST /api/team/leave.
type TeamLeaveRequest struct {
	Purge bool `json:"purge"`
}

// TeamLeaveReply says how many pulled records a purge forgot.
type TeamLeaveReply struct {
	Forgotten int `json:"forgotten"`
}

func (s *Server) registerTeam(g *gin.RouterGroup) {
	t := g.Group("/team", s.teamOn)
	t.GET("", s.teamStatus)
	t.POST("/join", s.teamJoin)
	t.POST("/share", s.teamShare)
	t.POST("/unshare", s.teamUnshare)
	t.POST("/leave", s.teamLeave)
	t.POST("/admin", s.teamAdmin)
	t.POST("/remove", s.teamRemove)
	t.GET("/search", s.teamSearch)
}

func (s *Server) teamOn(c *gin.Context) {
	if p := s.parts(); p.Team == nil {
		msg := "team memory is not available on this node"
		if p.TeamErr != nil {
			msg = "team memory failed to start: " + p.TeamErr.Error()
		}
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, gin.H{"error": msg})
		return
	}
	c.Next()
}

func (s *Server) teamStatus(c *gin.Context) {
	st, err := s.parts().Team.Status(c.Request.Context())
	s.teamReply(c, st, err)
}

func (s *Server) teamJoin(c *gin.Context) {
	var req TeamJoinRequest
	if err := c.ShouldBindJSON(&req); err != nil || len(req.URLs) == 0 || req.User == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"urls\": [\"http://host:4001\"], \"user\": \"NAME\", \"password\": \"…\"}"})
		return
	}
	info, err := s.parts().Team.Join(c.Request.Context(), team.JoinRequest{URLs: req.URLs, User: req.User, Password: req.Password, Name: req.Name, CACert: []byte(req.CACert)})
	s.teamReply(c, info, err)
}

func (s *Server) teamShare(c *gin.Context) {
	var req TeamProjectRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Project == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"project\": \"NAME\"}"})
		return
	}
	err := s.parts().Team.Share(c.Request.Context(), req.Project)
	s.teamReply(c, gin.H{"shared": req.Project}, err)
}

func (s *Server) teamUnshare(c *gin.Context) {
	var req TeamProjectRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Project == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"project\": \"NAME\"}"})
		return
	}
	err := s.parts().Team.Unshare(c.Request.Context(), req.Project)
	s.teamReply(c, gin.H{"unshared": req.Project}, err)
}

func (s *Server) teamLeave(c *gin.Context) {
	var req TeamLeaveRequest
	if c.Request.ContentLength != 0 {
		if err := c.ShouldBindJSON(&req); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"purge\": false}"})
			return
		}
	}
	n, err := s.parts().Team.Leave(c.Request.Context(), req.Purge)
	s.teamReply(c, TeamLeaveReply{Forgotten: n}, err)
}

func (s *Server) teamAdmin(c *gin.Context) {
	var req TeamAdminRequest
	if err := c.ShouldBindJSON(&req); err != nil || (req.Action != "add" && req.Action != "remove") || req.Device == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"action\": \"add\" or \"remove\", \"device\": \"@user/device\"}"})
		return
	}
	ch, err := s.parts().Team.Admin(c.Request.Context(), req.Action == "add", req.Device)
	s.teamReply(c, ch, err)
}

func (s *Server) teamRemove(c *gin.Context) {
	var req TeamRemoveRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Device == "" {
		c.JSON(http.StatusBadRequest, gin.H{"error": "body must be JSON {\"device\": \"@user/device\"}"})
		return
	}
	ch, err := s.parts().Team.Remove(c.Request.Context(), req.Device)
	s.teamReply(c, ch, err)
}

func (s *Server) teamSearch(c *gin.Context) {
	limit, _ := strconv.Atoi(c.Query("limit"))
	hits, err := s.parts().Team.Search(c.Request.Context(), c.Query("q"), c.Query("project"), limit)
	rep := apitype.TeamSearchReply{Hits: make([]apitype.TeamHit, 0, len(hits))}
	for _, h := range hits {
		rep.Hits = append(rep.Hits, apitype.TeamHit(h))
	}
	if errors.Is(err, team.ErrUnreachable) && s.parts().Search != nil {
		// Cut off, the answer is this device's own results and why the cluster's are missing,
		// within the team's bound (Config.AnswerWithin), not an error.
		local, lerr := s.parts().Search.Search(c.Request.Context(), apitype.SearchQuery{Text: c.Query("q"), Project: c.Query("project"), Limit: limit})
		if lerr == nil {
			rep.Unreachable, rep.Local, err = err.Error(), local.Hits, nil
		}
	}
	s.teamReply(c, rep, err)
}

// teamReply maps team's sentinel errors to statuses. Their texts name the user and hosts,
// never a password.
func (s *Server) teamReply(c *gin.Context, v any, err error) {
	var status int
	switch {
	case err == nil:
	case errors.Is(err, team.ErrUnauthorized):
		status = http.StatusUnauthorized
	case errors.Is(err, team.ErrForbidden), errors.Is(err, team.ErrLocalOnly), errors.Is(err, team.ErrNotAdmin), errors.Is(err, team.ErrRemoved):
		status = http.StatusForbidden
	case errors.Is(err, team.ErrUnknownMember):
		status = http.StatusNotFound
	case errors.Is(err, team.ErrLastAdmin), errors.Is(err, team.ErrNameTaken):
		status = http.StatusConflict
	case errors.Is(err, team.ErrNotJoined), errors.Is(err, team.ErrSchemaNewer):
		status = http.StatusConflict
	case errors.Is(err, team.ErrUnreachable), errors.Is(err, team.ErrUntrusted):
		status = http.StatusBadGateway
	}
	if status == 0 {
		s.reply(c, v, err)
		return
	}
	c.JSON(status, gin.H{"error": err.Error()})
}
