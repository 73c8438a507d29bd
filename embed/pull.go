package embed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	bertconv "github.com/nlpodyssey/cybertron/pkg/converter/bert"
	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	zlog "github.com/rs/zerolog/log"
)

// DefaultHubURL is the Hugging Face Hub that Pull downloads from.
const DefaultHubURL = "https://huggingface.co"

// ErrPull wraps every Pull failure; the models dir is unchanged when it is returned.
var ErrPull = errors.New("pull model")

// pullFiles are fetched in this order; config.json first so an unsupported model type
// fails before the large weights download.
var pullFiles = []string{"config.json", "vocab.txt", "tokenizer_config.json", "pytorch_model.bin"}

// PullConfig configures Pull.
type PullConfig struct {
	ModelsDir   string       // where model directories live; created if missing
	Model       string       // Hugging Face model ID; empty means DefaultModel
	HubURL      string       // empty means DefaultHubURL; tests point it at 127.0.0.1
	Revision    string       // empty means "main"
	AccessToken string       // optional Hub token, sent as a bearer token
	HTTPClient  *http.Client // nil means a client with no overall timeout (ctx bounds it)
	Force       bool         // re-download even when a working model is installed
	// Progress, if set, is called from Pull's goroutine as bytes arrive and at each
	// phase change. The CLI draws its progress bar from it.
	Progress func(Progress)
	Logger   *slog.Logger // nil discards; receives cybertron's own output at debug level
}

// Progress reports how far Pull has got.
type Progress struct {
	Phase string // "download", "convert", "verify" or "done"
	File  string // file being downloaded, in the download phase
	Done  int64  // bytes of File received
	Total int64  // File's size, or -1 when the server did not say
}

// Pull downloads a BERT sentence-transformers model from the Hub, converts it with
// cybertron's converter, verifies that it loads and embeds, and only then renames it
// into ModelsDir/Model. All work happens in a temporary directory inside ModelsDir
// that is removed on any failure, so an interrupted or failed pull never leaves a file
// that OpenCybertron could mistake for a model, and a forced re-pull that fails keeps
// the previous model. It returns the model directory.
//
// Pull is meant for the CLI (`memnode embed pull`), never the MCP server: cybertron's
// converter prints to os.Stdout, so Pull temporarily points os.Stdout (and cybertron's
// zerolog logger) at Logger while converting. That swap is process-wide; see
// captureOutput.
func Pull(ctx context.Context, cfg PullConfig) (string, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.HubURL == "" {
		cfg.HubURL = DefaultHubURL
	}
	if cfg.Revision == "" {
		cfg.Revision = "main"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Progress == nil {
		cfg.Progress = func(Progress) {}
	}
	if err := validModelID(cfg.Model); err != nil {
		return "", fmt.Errorf("%w: %w", ErrPull, err)
	}
	final := CybertronConfig{ModelsDir: cfg.ModelsDir, Model: cfg.Model}.ModelDir()
	if !cfg.Force {
		if c, err := OpenCybertron(CybertronConfig{ModelsDir: cfg.ModelsDir, Model: cfg.Model}); err == nil {
			c.Close()
			cfg.Progress(Progress{Phase: "done"})
			return final, nil
		}
	}
	if err := os.MkdirAll(cfg.ModelsDir, 0o700); err != nil {
		return "", fmt.Errorf("%w: %w", ErrPull, err)
	}
	// The temp dir sits inside ModelsDir so the final rename stays on one filesystem,
	// and its dot prefix keeps it from looking like a model ID.
	tmp, err := os.MkdirTemp(cfg.ModelsDir, ".pull-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPull, err)
	}
	defer os.RemoveAll(tmp)
	if err := pullInto(ctx, cfg, tmp); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrPull, cfg.Model, err)
	}
	if err := install(filepath.Join(tmp, filepath.FromSlash(cfg.Model)), final, tmp); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrPull, cfg.Model, err)
	}
	cfg.Progress(Progress{Phase: "done"})
	return final, nil
}

// validModelID accepts "org/name" or "name" made of safe characters, so a model ID can
// neither escape ModelsDir nor be mistaken for Pull's temp dirs.
func validModelID(id string) error {
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return fmt.Errorf("model ID %q: want org/name", id)
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.HasPrefix(p, ".") {
			return fmt.Errorf("model ID %q: bad path element %q", id, p)
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
				return fmt.Errorf("model ID %q: bad character %q", id, r)
			}
		}
	}
	return nil
}

func pullInto(ctx context.Context, cfg PullConfig, tmp string) error {
	dir := filepath.Join(tmp, filepath.FromSlash(cfg.Model))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, name := range pullFiles {
		if err := download(ctx, cfg, name, filepath.Join(dir, name)); err != nil {
			return err
		}
		if name == "config.json" {
			var mc cbert.Config
			if err := readJSON(filepath.Join(dir, name), &mc); err != nil {
				return err
			}
			if mc.ModelType != "bert" {
				return fmt.Errorf("model type %q is not supported (want a BERT sentence encoder)", mc.ModelType)
			}
		}
	}

	cfg.Progress(Progress{Phase: "convert"})
	if err := captureOutput(cfg.Logger, func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("converter panicked: %v", r)
			}
		}()
		return bertconv.Convert[float32](dir, true)
	}); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The PyTorch weights are only the converter's input; dropping them halves the
	// model's disk use.
	if err := os.Remove(filepath.Join(dir, "pytorch_model.bin")); err != nil {
		return err
	}

	cfg.Progress(Progress{Phase: "verify"})
	c, err := OpenCybertron(CybertronConfig{ModelsDir: tmp, Model: cfg.Model})
	if err != nil {
		return fmt.Errorf("verify converted model: %w", err)
	}
	c.Close()
	return syncDir(dir)
}

// download fetches one file to path via path+".part", failing on a non-200 status, an
// empty body or a body shorter or longer than Content-Length.
func download(ctx context.Context, cfg PullConfig, name, path string) error {
	u, err := url.JoinPath(cfg.HubURL, cfg.Model, "resolve", cfg.Revision, name)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	if cfg.AccessToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.AccessToken)
	}
	resp, err := cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: %s", name, resp.Status)
	}
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	defer f.Close()
	total := resp.ContentLength
	pw := &progressWriter{w: f, report: func(n int64) {
		cfg.Progress(Progress{Phase: "download", File: name, Done: n, Total: total})
	}}
	pw.report(0)
	n, err := io.Copy(pw, resp.Body)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("download %s: empty body", name)
	}
	if total >= 0 && n != total {
		return fmt.Errorf("download %s: got %d of %d bytes", name, n, total)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	if err := os.Rename(part, path); err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	return nil
}

// progressWriter reports cumulative bytes after each write, at most every 256 KiB so a
// fast download does not flood the callback.
type progressWriter struct {
	w       io.Writer
	n, last int64
	report  func(int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.n-p.last >= 256<<10 {
		p.last = p.n
		p.report(p.n)
	}
	return n, err
}

// ReadFrom defeats io.Copy's use of f.ReadFrom, which would bypass Write and progress.
func (p *progressWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := p.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			if p.n != p.last {
				p.last = p.n
				p.report(p.n)
			}
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// install moves the verified model from src to final. An existing model is first moved
// into trash (Pull's temp dir, removed afterwards), because rename cannot replace a
// non-empty directory; if the second rename fails the old model is put back.
func install(src, final, trash string) error {
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return err
	}
	old := filepath.Join(trash, "previous")
	moved := false
	if _, err := os.Lstat(final); err == nil {
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("move old model aside: %w", err)
		}
		moved = true
	}
	if err := os.Rename(src, final); err != nil {
		if moved {
			_ = os.Rename(old, final)
		}
		return fmt.Errorf("install model: %w", err)
	}
	return syncDir(filepath.Dir(final))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// outputMu serialises captureOutput: os.Stdout and zerolog's logger are process
// globals, and two overlapping swaps would restore each other's pipes.
var outputMu sync.Mutex

// captureOutput runs fn with os.Stdout and cybertron's zerolog logger redirected to
// logger (debug level, one record per line). cybertron's converter writes
// "Serializing model..." with fmt.Printf, and memnode's MCP server speaks JSON-RPC on
// stdout, so such prints must never reach the real stdout. Any other goroutine
// printing to os.Stdout meanwhile is captured too, which is why Pull is CLI-only.
func captureOutput(logger *slog.Logger, fn func() error) error {
	outputMu.Lock()
	defer outputMu.Unlock()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			logger.Debug("cybertron", "output", sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr) // keep draining if a line was too long
	}()
	savedStdout, savedZlog := os.Stdout, zlog.Logger
	os.Stdout = pw
	zlog.Logger = zlog.Logger.Output(pw)
	defer func() {
		os.Stdout, zlog.Logger = savedStdout, savedZlog
		pw.Close()
		<-done
		pr.Close()
	}()
	return fn()
}
