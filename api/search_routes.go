package api

import "github.com/gin-gonic/gin"

// SearchBackend is what the search routes need. (Owned by the search work: replaced.)
type SearchBackend interface{}

func (s *Server) registerSearch(g *gin.RouterGroup) {}
