package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
)

// fakeHub serves a tiny BERT checkpoint in Hugging Face's /{model}/resolve/main/{file}
// layout on 127.0.0.1. override replaces the handler for one file name.
type fakeHub struct {
	*httptest.Server
	files    map[string][]byte
	mu       sync.Mutex
	override map[string]http.HandlerFunc
	requests map[string]int
}

func newFakeHub(t *testing.T, model string) *fakeHub {
	t.Helper()
	spec := TinyModelSpec().withDefaults()
	terms := spec.vocab()
	cfg := cbert.Config{
		Architectures: []string{"BertModel"}, HiddenAct: "gelu", HiddenSize: spec.Hidden,
		IntermediateSize: spec.Intermediate, LayerNormEps: 1e-12, MaxPositionEmbeddings: spec.MaxPositions,
		ModelType: "bert", NumAttentionHeads: spec.Heads, NumHiddenLayers: spec.Layers,
		TypeVocabSize: 2, VocabSize: len(terms),
	}
	cfgJSON, _ := json.Marshal(cfg)
	tokJSON, _ := json.Marshal(cbert.TokenizerConfig{DoLowerCase: true, UnkToken: "[UNK]", SepToken: "[SEP]", ClsToken: "[CLS]"})
	h := &fakeHub{
		files: map[string][]byte{
			"config.json":           cfgJSON,
			"tokenizer_config.json": tokJSON,
			"vocab.txt":             []byte(strings.Join(terms, "\n") + "\n"),
			"pytorch_model.bin": torchStateDict(t, bertStateDict(len(terms), spec.Hidden, spec.Layers,
				spec.Intermediate, spec.MaxPositions, 7)),
		},
		override: map[string]http.HandlerFunc{},
		requests: map[string]int{},
	}
	prefix := "/" + model + "/resolve/main/"
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		h.mu.Lock()
		h.requests[name]++
		o := h.override[name]
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if o != nil {
			o(w, r)
			return
		}
		b, ok := h.files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *fakeHub) set(name string, fn http.HandlerFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.override[name] = fn
}

func (h *fakeHub) count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[name]
}

// assertNoLeftovers checks that a failed pull left models with no entries at all:
// no model dir, no temp dir, no .part file.
func assertNoLeftovers(t *testing.T, models string) {
	t.Helper()
	entries, err := os.ReadDir(models)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("leftover in models dir: %s", e.Name())
	}
	if _, err := OpenCybertron(CybertronConfig{ModelsDir: models, Model: tinyModel}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("after failed pull OpenCybertron = %v, want ErrNoModel", err)
	}
}

func TestPullConvertsVerifiesAndInstalls(t *testing.T) {
	hub := newFakeHub(t, tinyModel)
	models := filepath.Join(t.TempDir(), "models")

	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))

	var phases []string
	final := map[string]Progress{}
	progress := func(p Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		if p.Phase == "download" {
			final[p.File] = p
		}
	}

	// Stand-in for the MCP server's stdout: nothing cybertron prints may land here.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = pw
	dir, err := Pull(context.Background(), PullConfig{
		ModelsDir: models, Model: tinyModel, HubURL: hub.URL, Progress: progress, Logger: logger,
	})
	os.Stdout = saved
	pw.Close()
	leaked, _ := io.ReadAll(pr)
	pr.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(leaked) != 0 {
		t.Fatalf("pull wrote to stdout: %q", leaked)
	}
	logMu.Lock()
	if !strings.Contains(logBuf.String(), "Serializing model") {
		t.Errorf("converter output not routed to the logger; log:\n%s", logBuf.String())
	}
	logMu.Unlock()

	if want := filepath.Join(models, "test-org", "tiny-bert"); dir != want {
		t.Fatalf("dir %s, want %s", dir, want)
	}
	if got := strings.Join(phases, ","); got != "download,convert,verify,done" {
		t.Fatalf("phases %s", got)
	}
	for name, b := range hub.files {
		p := final[name]
		if p.Done != int64(len(b)) || p.Total != int64(len(b)) {
			t.Errorf("%s: last progress %d/%d, want %d", name, p.Done, p.Total, len(b))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pytorch_model.bin")); !os.IsNotExist(err) {
		t.Errorf("pytorch_model.bin kept: %v", err)
	}
	entries, _ := os.ReadDir(models)
	if len(entries) != 1 || entries[0].Name() != "test-org" {
		t.Errorf("models dir holds %v, want only test-org", entries)
	}

	c, err := OpenCybertron(CybertronConfig{ModelsDir: models, Model: tinyModel})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Embed(context.Background(), []string{"converted by the real cybertron converter"})
	if err != nil || len(v[0]) != 32 {
		t.Fatalf("embed: %v, %d", err, len(v))
	}

	// A second pull finds the working model and does not touch the network.
	before := hub.count("pytorch_model.bin")
	if _, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL}); err != nil {
		t.Fatal(err)
	}
	if hub.count("pytorch_model.bin") != before || hub.count("config.json") != 1 {
		t.Fatalf("second pull downloaded again")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestPullFailuresLeaveNothing(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		serve http.HandlerFunc
	}{
		{"weights 404", "pytorch_model.bin", http.NotFound},
		{"server error", "vocab.txt", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}},
		{"empty vocab", "vocab.txt", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "0")
		}},
		{"empty weights, unknown length", "pytorch_model.bin", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush() // chunked, no Content-Length
		}},
		{"truncated weights", "pytorch_model.bin", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write(make([]byte, 5000)) // the server then drops the connection
		}},
		{"garbage weights", "pytorch_model.bin", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html>you are being rate limited</html>"))
		}},
		{"garbage config", "config.json", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("{nope"))
		}},
		{"weights from another architecture", "pytorch_model.bin", func(w http.ResponseWriter, r *http.Request) {
			w.Write(torchStateDict(t, bertStateDict(50, 16, 1, 32, 16, 1)))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub := newFakeHub(t, tinyModel)
			hub.set(tc.file, tc.serve)
			models := t.TempDir()
			_, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL})
			if !errors.Is(err, ErrPull) {
				t.Fatalf("want ErrPull, got %v", err)
			}
			t.Log(err)
			assertNoLeftovers(t, models)
		})
	}
}

func TestPullRejectsUnsupportedModelTypeBeforeWeights(t *testing.T) {
	hub := newFakeHub(t, tinyModel)
	hub.set("config.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"model_type":"bart","architectures":["BartModel"]}`))
	})
	models := t.TempDir()
	_, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL})
	if !errors.Is(err, ErrPull) || !strings.Contains(err.Error(), "bart") {
		t.Fatalf("got %v", err)
	}
	if n := hub.count("pytorch_model.bin"); n != 0 {
		t.Fatalf("weights requested %d times", n)
	}
	assertNoLeftovers(t, models)
}

func TestPullCancelledMidDownload(t *testing.T) {
	hub := newFakeHub(t, tinyModel)
	hub.set("pytorch_model.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10000000")
		w.Write(make([]byte, 300<<10)) // past the 256 KiB progress step
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	models := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Pull(ctx, PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL,
		Progress: func(p Progress) {
			if p.File == "pytorch_model.bin" && p.Done > 0 {
				cancel()
			}
		}})
	if !errors.Is(err, ErrPull) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	assertNoLeftovers(t, models)
}

func TestForcedPullFailureKeepsPreviousModel(t *testing.T) {
	models := t.TempDir()
	writeTinyModel(t, models)
	old := openTiny(t, models, 0)
	want, err := old.Embed(context.Background(), []string{"keep me"})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	hub := newFakeHub(t, tinyModel)
	hub.set("pytorch_model.bin", http.NotFound)
	if _, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL, Force: true}); !errors.Is(err, ErrPull) {
		t.Fatalf("got %v", err)
	}
	c := openTiny(t, models, 0)
	got, err := c.Embed(context.Background(), []string{"keep me"})
	if err != nil {
		t.Fatal(err)
	}
	if Cosine(got[0], want[0]) < 0.999999 {
		t.Fatal("previous model changed after a failed forced pull")
	}
	c.Close()

	// A forced pull that succeeds replaces it, leaving no temp dirs.
	hub.set("pytorch_model.bin", nil)
	if _, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: tinyModel, HubURL: hub.URL, Force: true}); err != nil {
		t.Fatal(err)
	}
	c = openTiny(t, models, 0)
	got, err = c.Embed(context.Background(), []string{"keep me"})
	if err != nil {
		t.Fatal(err)
	}
	if Cosine(got[0], want[0]) > 0.999999 {
		t.Fatal("forced pull did not replace the model")
	}
	entries, _ := os.ReadDir(models)
	if len(entries) != 1 {
		t.Fatalf("models dir: %v", entries)
	}
}

func TestPullRejectsBadModelIDs(t *testing.T) {
	models := t.TempDir()
	for _, id := range []string{"../escape", "org/../../x", ".pull-123", "a/b/c", "org/", "sp ace/x"} {
		if _, err := Pull(context.Background(), PullConfig{ModelsDir: models, Model: id, HubURL: "http://127.0.0.1:1"}); !errors.Is(err, ErrPull) {
			t.Errorf("%q: got %v", id, err)
		}
	}
	entries, _ := os.ReadDir(models)
	if len(entries) != 0 {
		t.Fatalf("models dir: %v", entries)
	}
}
