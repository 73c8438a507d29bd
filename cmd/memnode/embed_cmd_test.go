//go:build !memnode_lean

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/e2ekit"
)

func embedEnv(tb testing.TB, hub string) (*cliEnv, *bytes.Buffer, *bytes.Buffer) {
	tb.Helper()
	s := configs.Default()
	s.Port = e2ekit.FreePort(tb) // nothing listens there: "node not running"
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "HF_ENDPOINT" {
			return hub
		}
		return ""
	}
	return &cliEnv{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: getenv, DataDir: tb.TempDir(), Settings: s}, &out, &errb
}

func TestEmbedPullFailureLeavesNothing(t *testing.T) {
	var hits atomic.Int32
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.HasSuffix(r.URL.Path, "/config.json") {
			w.Write([]byte(`{"model_type":"bert","hidden_size":32,"num_hidden_layers":2,"num_attention_heads":2,"vocab_size":40,"max_position_embeddings":128}`))
			return
		}
		http.NotFound(w, r) // vocab.txt and the weights are missing: a broken repository
	}))
	defer hub.Close()
	env, out, errb := embedEnv(t, hub.URL)
	if code := cmdEmbed(context.Background(), env, []string{"pull", "org/broken"}); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errb.String())
	}
	if hits.Load() < 2 {
		t.Fatalf("hub saw %d requests", hits.Load())
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out.String())
	}
	if !strings.Contains(errb.String(), "nothing was installed") {
		t.Errorf("stderr = %q", errb.String())
	}
	entries, _ := os.ReadDir(modelsDir(env))
	for _, e := range entries {
		t.Errorf("left behind in the models dir: %s", e.Name())
	}
	if _, err := buildEmbedder(env)(); err == nil {
		t.Fatal("the node would find a model after a failed pull")
	}
}

func TestEmbedPullInstalledModelAndStatus(t *testing.T) {
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("pull of an installed model contacted the hub: %s", r.URL.Path)
		http.NotFound(w, r)
	}))
	defer hub.Close()
	env, out, errb := embedEnv(t, hub.URL)
	env.Settings.EmbedModel = "test/tiny"

	if code := cmdEmbed(context.Background(), env, []string{"status"}); code != 0 || !strings.Contains(out.String(), "installed:   no") {
		t.Fatalf("status before install: %d %q", code, out.String())
	}
	if _, err := buildEmbedder(env)(); err == nil {
		t.Fatal("embedder opened without a model")
	}

	if err := embed.WriteRandomModel(filepath.Join(modelsDir(env), "test", "tiny"), embed.TinyModelSpec()); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := cmdEmbed(context.Background(), env, []string{"pull"}); code != 0 {
		t.Fatalf("pull of an installed model: exit %d, stderr %q", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("pull wrote to stdout: %q", out.String())
	}
	e, err := buildEmbedder(env)()
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	if e.ModelID() != "test/tiny" || e.Dim() != 32 {
		t.Errorf("embedder %s dim %d", e.ModelID(), e.Dim())
	}
	e.Close()
	if code := cmdEmbed(context.Background(), env, []string{"status"}); code != 0 ||
		!strings.Contains(out.String(), "installed:   yes") || !strings.Contains(out.String(), "node:        not running") {
		t.Fatalf("status after install: %d %q", code, out.String())
	}
	if code := cmdEmbed(context.Background(), env, []string{"frobnicate"}); code != 2 {
		t.Errorf("unknown subcommand: exit %d, want 2", code)
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progressBar{w: &b}
	p.update(embed.Progress{Phase: "download", File: "pytorch_model.bin", Done: 0, Total: 4 << 20})
	p.update(embed.Progress{Phase: "download", File: "pytorch_model.bin", Done: 2 << 20, Total: 4 << 20})
	p.update(embed.Progress{Phase: "download", File: "pytorch_model.bin", Done: 4 << 20, Total: 4 << 20})
	p.update(embed.Progress{Phase: "convert"})
	p.update(embed.Progress{Phase: "done"})
	p.finish()
	got := b.String()
	for _, want := range []string{" 50% 2.0 MiB / 4.0 MiB", "[" + strings.Repeat("=", 30) + "] 100%", "\nconverting"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%q", want, got)
		}
	}
}

// TestWaitEmbeddedShowsProgressUntilDone: `memnode embed status --wait` redraws one line
// per poll with the count, the share and the rate, and returns once every observation has
// a vector (or failed); a node that is not embedding is an error.
func TestWaitEmbeddedShowsProgressUntilDone(t *testing.T) {
	seq := []apitype.EmbedStatus{
		{State: "on", Model: "m", Embedded: 0, Total: 100},
		{State: "on", Model: "m", Embedded: 40, Total: 100},
		{State: "on", Model: "m", Embedded: 98, Total: 100, Failed: 2},
	}
	i := 0
	poll := func(context.Context) (apitype.EmbedStatus, error) {
		st := seq[min(i, len(seq)-1)]
		i++
		return st, nil
	}
	tick := make(chan time.Time, 10)
	for range 10 {
		tick <- time.Time{}
	}
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var out bytes.Buffer
	if err := waitEmbedded(context.Background(), &out, poll, tick, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"\rembedding m: 0/100 (0%)", "\rembedding m: 40/100 (40%), 20.0 observations/s",
		"98/100 (98%)", "2 could not be embedded — done\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%q", want, got)
		}
	}
	if i != 3 {
		t.Errorf("polled %d times, want 3 (stop when done)", i)
	}
	off := func(context.Context) (apitype.EmbedStatus, error) {
		return apitype.EmbedStatus{State: "off — no model"}, nil
	}
	if err := waitEmbedded(context.Background(), &out, off, tick, now); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("a node without a model: %v", err)
	}
}
