package embed

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyModel = "test-org/tiny-bert"

// writeTinyModel builds a 2-layer, hidden-32 BERT with random weights in cybertron's
// on-disk layout under modelsDir/tinyModel.
func writeTinyModel(tb testing.TB, modelsDir string) string {
	tb.Helper()
	dir := filepath.Join(modelsDir, filepath.FromSlash(tinyModel))
	spec := TinyModelSpec()
	spec.Words = []string{"database", "migration", "failed", "sqlite", "hook", "session", "memory"}
	if err := WriteRandomModel(dir, spec); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func openTiny(tb testing.TB, modelsDir string, maxTokens int) *Cybertron {
	tb.Helper()
	c, err := OpenCybertron(CybertronConfig{ModelsDir: modelsDir, Model: tinyModel, MaxTokens: maxTokens})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestCybertronTinyModel(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models)
	c := openTiny(t, models, 0)

	if c.Dim() != 32 || c.ModelID() != tinyModel {
		t.Fatalf("dim %d id %q", c.Dim(), c.ModelID())
	}
	texts := []string{
		"the database migration failed",
		"SQLite hook session memory",
		"", // empty text is [CLS] [SEP] and must still embed
		"unknown wörds ünïcode 中文 xyzzy",
	}
	vs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != 32 {
			t.Fatalf("text %d: dim %d", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-5 {
			t.Fatalf("text %d: norm %v", i, math.Sqrt(n))
		}
	}
	if Cosine(vs[0], vs[1]) > 0.99999 {
		t.Fatalf("different texts gave the same vector")
	}

	// Determinism: same text, same vector, across calls and across a fresh load.
	again, err := c.Embed(context.Background(), texts[:1])
	if err != nil {
		t.Fatal(err)
	}
	c2 := openTiny(t, models, 0)
	fresh, err := c2.Embed(context.Background(), texts[:1])
	if err != nil {
		t.Fatal(err)
	}
	for i := range vs[0] {
		if vs[0][i] != again[0][i] || vs[0][i] != fresh[0][i] {
			t.Fatalf("non-deterministic at %d: %v %v %v", i, vs[0][i], again[0][i], fresh[0][i])
		}
	}
}

func TestCybertronTruncatesLongText(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models) // max_position_embeddings 128
	c := openTiny(t, models, 1000)
	if c.maxTokens != 128 {
		t.Fatalf("maxTokens %d, want capped at 128", c.maxTokens)
	}
	long := strings.Repeat("database migration ", 500)
	v, err := c.Embed(context.Background(), []string{long})
	if err != nil {
		t.Fatalf("long text: %v", err)
	}
	// Truncation keeps the first 126 word pieces, so a text sharing that prefix embeds
	// identically.
	prefix := strings.Repeat("database migration ", 63) + "tail words differ"
	w, err := c.Embed(context.Background(), []string{prefix})
	if err != nil {
		t.Fatal(err)
	}
	if Cosine(v[0], w[0]) < 0.999999 {
		t.Fatalf("truncated prefix differs: cos %v", Cosine(v[0], w[0]))
	}
}

func TestCybertronClose(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models)
	c := openTiny(t, models, 0)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Embed after Close: %v", err)
	}
}

func TestCybertronContextCancelled(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models)
	c := openTiny(t, models, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestOpenCybertronRejectsBrokenModels(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"missing dir", func(t *testing.T, dir string) { os.RemoveAll(dir) }},
		{"zero-byte weights", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "spago_model.bin"), 0) }},
		{"zero-byte vocab", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "vocab.txt"), 0) }},
		{"zero-byte config", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "config.json"), 0) }},
		{"missing tokenizer config", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "tokenizer_config.json")) }},
		{"truncated weights", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "spago_model.bin")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			truncate(t, p, fi.Size()/2)
		}},
		{"garbage weights", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "spago_model.bin"), []byte("<html>rate limited</html>"), 0o644)
		}},
		{"garbage config", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte("{not json"), 0o644)
		}},
		{"non-bert config", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"bart","hidden_size":32}`), 0o644)
		}},
		{"vocab without specials", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte("a\nb\nc\n"), 0o644)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			models := t.TempDir()
			dir := writeTinyModel(t, models)
			tc.damage(t, dir)
			c, err := OpenCybertron(CybertronConfig{ModelsDir: models, Model: tinyModel})
			if !errors.Is(err, ErrNoModel) {
				if c != nil {
					c.Close()
				}
				t.Fatalf("want ErrNoModel, got %v", err)
			}
		})
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// The MCP server speaks JSON-RPC on stdout: loading and embedding must print nothing.
func TestCybertronWritesNothingToStdout(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = pw
	c, err := OpenCybertron(CybertronConfig{ModelsDir: models, Model: tinyModel})
	if err == nil {
		_, err = c.Embed(context.Background(), []string{"some text to embed"})
		c.Close()
	}
	_, missErr := OpenCybertron(CybertronConfig{ModelsDir: models, Model: "absent/model"})
	os.Stdout = saved
	pw.Close()
	out, _ := io.ReadAll(pr)
	pr.Close()
	if err != nil || !errors.Is(missErr, ErrNoModel) {
		t.Fatal(err, missErr)
	}
	if len(out) != 0 {
		t.Fatalf("wrote to stdout: %q", out)
	}
}
