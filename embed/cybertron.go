package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/cybertron/pkg/tasks"
	"github.com/nlpodyssey/cybertron/pkg/tasks/textencoding"
	tebert "github.com/nlpodyssey/cybertron/pkg/tasks/textencoding/bert"
	"github.com/nlpodyssey/cybertron/pkg/tokenizers"
	"github.com/nlpodyssey/cybertron/pkg/tokenizers/wordpiecetokenizer"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
)

// ErrClosed is returned by Embed after Close.
var ErrClosed = errors.New("embedder closed")

// DefaultMaxTokens matches sentence-transformers' max_seq_length for all-MiniLM-L6-v2:
// longer inputs are truncated, as the Python library does, rather than rejected.
const DefaultMaxTokens = 256

// modelFiles are the files a converted BERT model directory must hold, all non-empty.
var modelFiles = []string{"config.json", "vocab.txt", "tokenizer_config.json", "spago_model.bin"}

// CybertronConfig configures OpenCybertron.
type CybertronConfig struct {
	// ModelsDir holds one directory per model, named by model ID (e.g.
	// <data dir>/models/sentence-transformers/all-MiniLM-L6-v2).
	ModelsDir string
	// Model is the Hugging Face model ID; empty means DefaultModel.
	Model string
	// MaxTokens bounds the token sequence including [CLS] and [SEP]; 0 means
	// DefaultMaxTokens. It is capped at the model's max_position_embeddings.
	MaxTokens int
	// Workers is how many texts one Embed call encodes at once, each on its own
	// goroutine; 0 means runtime.GOMAXPROCS (a backfill batch uses every core).
	Workers int
}

func (c CybertronConfig) withDefaults() CybertronConfig {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// ModelDir is where the model c.Model lives under c.ModelsDir.
func (c CybertronConfig) ModelDir() string {
	c = c.withDefaults()
	return filepath.Join(c.ModelsDir, filepath.FromSlash(c.Model))
}

// Cybertron embeds text with a BERT sentence encoder: the model is loaded by cybertron,
// then run by memnode's inference-only forward pass (bertEncoder: one matrix product per
// layer and text, buffers reused, texts of one call spread over Workers goroutines).
// WordPiece tokens, mean pooling over all token states ([CLS] and [SEP] included, as
// sentence-transformers does for an unpadded sequence), then L2 normalisation.
type Cybertron struct {
	modelID   string
	dim       int
	maxTokens int
	lower     bool
	workers   int

	tokenizer *wordpiecetokenizer.WordPieceTokenizer
	vocab     *vocabulary.Vocabulary
	scratch   sync.Pool // *scratch

	// mu guards enc: Embed holds it shared, Close exclusively (so Close waits for
	// in-flight calls).
	mu  sync.RWMutex
	enc *bertEncoder // nil after Close
}

// OpenCybertron verifies and loads the model named by cfg through cybertron's loader
// with downloads and conversion disabled, so it never touches the network and never
// writes to the models dir. A missing, empty, truncated or unparsable model yields an
// error wrapping ErrNoModel.
func OpenCybertron(cfg CybertronConfig) (*Cybertron, error) {
	cfg = cfg.withDefaults()
	dir := cfg.ModelDir()
	mc, tc, err := VerifyModelDir(dir)
	if err != nil {
		return nil, err
	}
	m, err := loadTextEncoding(cfg.ModelsDir, cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("%w: load %s: %w", ErrNoModel, dir, err)
	}
	enc, err := newBertEncoder(m.Model.Bert)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNoModel, dir, err)
	}
	c := &Cybertron{
		modelID:   cfg.Model,
		dim:       mc.HiddenSize,
		maxTokens: min(cfg.MaxTokens, mc.MaxPositionEmbeddings),
		lower:     tc.DoLowerCase,
		workers:   cfg.Workers,
		tokenizer: m.Tokenizer,
		vocab:     m.Model.Bert.Embeddings.Vocab,
		enc:       enc,
	}
	// A forward pass proves the weights, vocabulary and config agree; a mismatch would
	// otherwise surface later as a panic inside the background worker.
	v, err := c.Embed(context.Background(), []string{"memnode model check"})
	if err != nil {
		return nil, fmt.Errorf("%w: probe %s: %w", ErrNoModel, dir, err)
	}
	if len(v[0]) != c.dim {
		return nil, fmt.Errorf("%w: probe %s: vector dim %d, config says %d", ErrNoModel, dir, len(v[0]), c.dim)
	}
	return c, nil
}

func loadTextEncoding(modelsDir, model string) (m *tebert.TextEncoding, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cybertron panicked: %v", r)
		}
	}()
	enc, err := tasks.Load[textencoding.Interface](&tasks.Config{
		ModelsDir:        modelsDir,
		ModelName:        model,
		DownloadPolicy:   tasks.DownloadNever,
		ConversionPolicy: tasks.ConvertNever,
	})
	if err != nil {
		return nil, err
	}
	te, ok := enc.(*tebert.TextEncoding)
	if !ok {
		return nil, fmt.Errorf("unexpected text encoder %T", enc)
	}
	return te, nil
}

// VerifyModelDir checks that dir holds a complete converted BERT model: every file
// present and non-empty (cybertron leaves 0-byte files behind after a failed download),
// the JSON configs parsable and sane, and the vocabulary holding the special tokens.
// It does not decode the weights; OpenCybertron does. Errors wrap ErrNoModel.
func VerifyModelDir(dir string) (cbert.Config, cbert.TokenizerConfig, error) {
	var mc cbert.Config
	var tc cbert.TokenizerConfig
	for _, name := range modelFiles {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return mc, tc, fmt.Errorf("%w: %s: %w", ErrNoModel, dir, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() == 0 {
			return mc, tc, fmt.Errorf("%w: %s is empty or not a file (interrupted download?)", ErrNoModel, filepath.Join(dir, name))
		}
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &mc); err != nil {
		return mc, tc, fmt.Errorf("%w: %w", ErrNoModel, err)
	}
	if mc.ModelType != "bert" || mc.HiddenSize <= 0 || mc.NumHiddenLayers <= 0 ||
		mc.NumAttentionHeads <= 0 || mc.VocabSize <= 0 || mc.MaxPositionEmbeddings < 3 {
		return mc, tc, fmt.Errorf("%w: %s: not a usable BERT config (model_type %q, hidden %d, layers %d)",
			ErrNoModel, dir, mc.ModelType, mc.HiddenSize, mc.NumHiddenLayers)
	}
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &tc); err != nil {
		return mc, tc, fmt.Errorf("%w: %w", ErrNoModel, err)
	}
	if err := checkVocab(filepath.Join(dir, "vocab.txt")); err != nil {
		return mc, tc, fmt.Errorf("%w: %w", ErrNoModel, err)
	}
	return mc, tc, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

func checkVocab(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read vocab: %w", err)
	}
	defer f.Close()
	need := map[string]bool{
		wordpiecetokenizer.DefaultClassToken:        false,
		wordpiecetokenizer.DefaultSequenceSeparator: false,
		wordpiecetokenizer.DefaultUnknownToken:      false,
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if _, ok := need[sc.Text()]; ok {
			need[sc.Text()] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read vocab %s: %w", path, err)
	}
	for tok, ok := range need {
		if !ok {
			return fmt.Errorf("vocab %s lacks %s", path, tok)
		}
	}
	return nil
}

// Embed implements Embedder. Texts longer than MaxTokens are truncated. The texts are
// encoded in parallel (Workers at a time); the vectors come back in order.
func (c *Cybertron) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.enc == nil {
		return nil, ErrClosed
	}
	out := make([][]float32, len(texts))
	errs := make([]error, len(texts))
	var next atomic.Int64
	work := func() {
		sc, _ := c.scratch.Get().(*scratch)
		if sc == nil {
			sc = &scratch{}
		}
		defer c.scratch.Put(sc)
		for {
			i := int(next.Add(1) - 1)
			if i >= len(texts) {
				return
			}
			if err := ctx.Err(); err != nil {
				errs[i] = fmt.Errorf("embed: %w", err)
				return
			}
			out[i], errs[i] = c.embedOne(texts[i], sc)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("embed text %d: %w", i, errs[i])
			}
		}
	}
	n := min(c.workers, len(texts))
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Cybertron) embedOne(text string, sc *scratch) (v []float32, err error) {
	// A shape bug must fail one text, not the daemon (this may run on a worker goroutine).
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encoder panicked: %v", r)
		}
	}()
	toks := c.tokenize(text)
	ids := make([]int, len(toks))
	for i, t := range toks {
		id, ok := c.vocab.ID(t)
		if !ok {
			return nil, fmt.Errorf("token %q is not in the vocabulary", t)
		}
		ids[i] = id
	}
	v = make([]float32, c.dim)
	if err := c.enc.encode(ids, sc, v); err != nil {
		return nil, err
	}
	if !Normalize(v) {
		return nil, fmt.Errorf("encoder returned a zero or non-finite vector")
	}
	return v, nil
}

// tokenize mirrors cybertron's TextEncoding.tokenize and adds truncation, which
// cybertron lacks (it rejects sequences over max_position_embeddings instead).
func (c *Cybertron) tokenize(text string) []string {
	if c.lower {
		text = strings.ToLower(text)
	}
	words := tokenizers.GetStrings(c.tokenizer.Tokenize(text))
	if limit := c.maxTokens - 2; len(words) > limit {
		words = words[:limit]
	}
	toks := make([]string, 0, len(words)+2)
	toks = append(toks, wordpiecetokenizer.DefaultClassToken)
	toks = append(toks, words...)
	return append(toks, wordpiecetokenizer.DefaultSequenceSeparator)
}

// ModelID implements Embedder: the Hugging Face model ID.
func (c *Cybertron) ModelID() string { return c.modelID }

// Dim implements Embedder.
func (c *Cybertron) Dim() int { return c.dim }

// Close implements Embedder. It waits for an in-flight Embed and is idempotent.
func (c *Cybertron) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enc = nil
	return nil
}
