package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/ai/offline"
)

func BenchmarkParseObservations(b *testing.B) {
	in := strings.Repeat(goodObservation, 3)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if obs, err := ParseObservations(in); err != nil || len(obs) != 3 {
			b.Fatal(len(obs), err)
		}
	}
}

func BenchmarkObservationPrompt8Calls(b *testing.B) {
	calls := toolCalls(8, "s")
	for b.Loop() {
		_ = splitBatches(calls, DefaultMaxCallBytes, DefaultMaxRequestBytes)
		_ = observationPrompt(calls, DefaultMaxCallBytes)
	}
}

func BenchmarkBudgetReserveSettle(b *testing.B) {
	budget := NewBudget(1<<62, NewMemoryBudgetStore(), nil)
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := budget.Reserve(ctx, 1000)
			if err != nil {
				b.Fatal(err)
			}
			_ = r.Settle(ctx, 900)
		}
	})
}

// BenchmarkChainObserveFakeServer measures the client-side cost of one batched request
// (8 tool calls) through Chain → Compressor → real HTTP client → fake Anthropic server on
// 127.0.0.1 → XML parse, with 4 concurrent workers.
func BenchmarkChainObserveFakeServer(b *testing.B) {
	f := newFakeAPI(b, "anthropic", "k", fakeReply{text: goodObservation, in: 2000, out: 150})
	c := newTestCompressor(b, f.provider(5*time.Second), &sleepRecorder{})
	ch, err := NewChain(ChainConfig{Compressors: []*Compressor{c}, Fallback: &fakeOffline{},
		Budget: NewBudget(1<<62, NewMemoryBudgetStore(), nil)})
	if err != nil {
		b.Fatal(err)
	}
	calls := toolCalls(8, "s")
	b.SetParallelism(2) // 2 × GOMAXPROCS(2) = 4 workers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			obs, u, err := ch.Observe(context.Background(), calls)
			if err != nil || len(obs) != 1 || u.Model == "offline" {
				b.Error(len(obs), u, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(b.N*len(calls))/b.Elapsed().Seconds(), "calls/s")
}

// TestChainWithRealOfflineFallback checks the wiring the node uses: a rejected key ends in
// the package ai offline compressor, whose observations and model are returned.
func TestChainWithRealOfflineFallback(t *testing.T) {
	f := newFakeAPI(t, "gemini", "k")
	p := f.provider(time.Second)
	f.setKey("other")
	ch, err := NewChain(ChainConfig{Compressors: []*Compressor{newTestCompressor(t, p, &sleepRecorder{})}, Fallback: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	obs, u, err := ch.Observe(context.Background(), toolCalls(2, "s"))
	if err != nil || len(obs) == 0 || u.Model != offline.New().Name() {
		t.Fatalf("obs %d usage %+v err %v", len(obs), u, err)
	}
}
