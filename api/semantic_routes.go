package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/memnode/memnode/api/apitype"
)

// SemanticBackend serves semantic inject; a Backend that implements it gets
// POST /api/context/semantic (the node does).
type SemanticBackend interface {
	// SemanticContext returns the context block of the observations of project most
	// related to prompt, or "" (setting off, no model, nothing related).
	SemanticContext(ctx context.Context, project, prompt string) (string, error)
}

func (s *Server) registerSemantic(g *gin.RouterGroup) {
	sb, ok := s.cfg.Backend.(SemanticBackend)
	if !ok {
		return
	}
	g.POST("/context/semantic", func(c *gin.Context) {
		var req apitype.SemanticRequest
		err := c.ShouldBindJSON(&req)
		if tooLarge(c, err) {
			return
		}
		if err != nil || strings.TrimSpace(req.Project) == "" {
			badRequest(c, `body must be {"prompt": "…", "project": "…"}`)
			return
		}
		text, err := sb.SemanticContext(c.Request.Context(), req.Project, req.Prompt)
		if err != nil {
			s.reply(c, nil, err)
			return
		}
		c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(text))
	})
}
