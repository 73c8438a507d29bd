package api

import "github.com/gin-gonic/gin"

// PeerBackend is what the peers routes need. (Owned by the sync work: replaced.)
type PeerBackend interface{}

func (s *Server) registerPeers(g *gin.RouterGroup) {}
