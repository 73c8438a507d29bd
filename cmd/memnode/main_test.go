package main

import (
	"os"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestMain builds memnode once (internal/e2ekit) for the real-process tests that stay here
// because they read package main's own tables (e2e_args_test.go: every command of
// commandTable has its argument cases). The other real-process tests are in e2e/.
func TestMain(m *testing.M) { os.Exit(e2ekit.MainWithUnitTests(m)) }
