package search_test

import (
	"context"
	"os"
	"testing"

	"github.com/memnode/memnode/replica"
)

func TestZZBuildExp(t *testing.T) {
	p := os.Getenv("EXP_DB")
	if p == "" {
		t.Skip()
	}
	r, err := replica.Open(context.Background(), replica.Config{Path: p, Origin: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	obs := genObservations(10000, 10000)
	for i := 0; i < len(obs); i += 2000 {
		if _, err := r.Import(context.Background(), &replica.ImportBatch{Observations: obs[i:min(i+2000, len(obs))]}); err != nil {
			t.Fatal(err)
		}
	}
}
