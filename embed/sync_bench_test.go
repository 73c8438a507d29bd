package embed

import (
	"testing"

	"github.com/nlpodyssey/spago/ag"
)

func BenchmarkEmbedTinySync(b *testing.B) {
	ag.SetForceSyncExecution(true)
	defer ag.SetForceSyncExecution(false)
	benchEmbed(b, "bench/tiny")
}
func BenchmarkEmbedMiniLMSizedSync(b *testing.B) {
	ag.SetForceSyncExecution(true)
	defer ag.SetForceSyncExecution(false)
	benchEmbed(b, "bench/minilm-sized")
}
