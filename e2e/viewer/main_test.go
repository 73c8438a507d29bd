package viewer

import (
	"os"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

func TestMain(m *testing.M) { os.Exit(e2ekit.Main(m)) }
