package p

import (
	"strings"
	"testing"
)

func TestNothing(t *testing.T) { _ = strings.ToUpper("x") }

func TestLogOnly(t *testing.T) { t.Log("hi"); helperNoFail(t) }

func helperNoFail(t *testing.T) { t.Helper() }

func TestFails(t *testing.T) {
	if 1 != 1 {
		t.Fatal("x")
	}
}

func TestViaHelper(t *testing.T) { helperFails(t) }

func helperFails(tb testing.TB) { tb.Errorf("x") }

func TestSubtestNoFail(t *testing.T) { t.Run("a", func(t *testing.T) { t.Log("x") }) }
