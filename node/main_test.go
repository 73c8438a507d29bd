package node

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestMain puts gin in release mode, as cmd/memnode does: no debug banner in test output.
func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(m.Run())
}
