package embed

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	emb "github.com/nlpodyssey/spago/nn/embedding"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/normalization/layernorm"
)

// RandomModelSpec describes a BERT encoder with random weights, for tests and
// benchmarks that must exercise cybertron's real loader and forward pass without a
// download. Zero fields take the tiny defaults (2 layers, hidden 32, 2 heads).
type RandomModelSpec struct {
	Layers       int      // num_hidden_layers; default 2
	Hidden       int      // hidden_size; default 32
	Heads        int      // num_attention_heads; default 2
	Intermediate int      // intermediate_size; default 4*Hidden
	MaxPositions int      // max_position_embeddings; default 512
	VocabSize    int      // total vocabulary incl. specials; padded with filler tokens
	Words        []string // whole-word entries added after the specials and a-z pieces
	Seed         uint64
}

// TinyModelSpec is the 2-layer, hidden-32 model the tests build.
func TinyModelSpec() RandomModelSpec {
	return RandomModelSpec{Layers: 2, Hidden: 32, Heads: 2, Intermediate: 64, MaxPositions: 128, Seed: 1}
}

// MiniLMSizedSpec has all-MiniLM-L6-v2's shape (6 layers, hidden 384, 12 heads,
// intermediate 1536, vocab 30522) with random weights, for encode-speed benchmarks.
func MiniLMSizedSpec() RandomModelSpec {
	return RandomModelSpec{Layers: 6, Hidden: 384, Heads: 12, Intermediate: 1536, MaxPositions: 512, VocabSize: 30522, Seed: 1}
}

func (s RandomModelSpec) withDefaults() RandomModelSpec {
	if s.Layers == 0 {
		s.Layers = 2
	}
	if s.Hidden == 0 {
		s.Hidden = 32
	}
	if s.Heads == 0 {
		s.Heads = 2
	}
	if s.Intermediate == 0 {
		s.Intermediate = 4 * s.Hidden
	}
	if s.MaxPositions == 0 {
		s.MaxPositions = 512
	}
	return s
}

// vocab returns the specials, single letters and digits with their "##" continuations
// (so any lower-case ASCII word tokenizes without [UNK]), the given words, then filler.
func (s RandomModelSpec) vocab() []string {
	terms := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	seen := make(map[string]bool)
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for _, t := range terms {
		seen[t] = true
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
		add(string(c))
		add("##" + string(c))
	}
	for _, w := range s.Words {
		add(strings.ToLower(w))
	}
	for i := 0; len(terms) < s.VocabSize; i++ {
		add(fmt.Sprintf("[unused%d]", i))
	}
	return terms
}

// WriteRandomModel writes a complete cybertron model directory (config.json, vocab.txt,
// tokenizer_config.json, spago_model.bin) for spec into dir, in exactly the layout
// cybertron's converter produces, so OpenCybertron loads it through the real loader.
func WriteRandomModel(dir string, spec RandomModelSpec) error {
	spec = spec.withDefaults()
	if spec.Hidden%spec.Heads != 0 {
		return fmt.Errorf("write random model: hidden %d not divisible by heads %d", spec.Hidden, spec.Heads)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write random model: %w", err)
	}
	terms := spec.vocab()
	cfg := cbert.Config{
		Architectures:         []string{"BertModel"},
		HiddenAct:             "gelu",
		HiddenSize:            spec.Hidden,
		EmbeddingsSize:        spec.Hidden,
		InitializerRange:      0.02,
		IntermediateSize:      spec.Intermediate,
		LayerNormEps:          1e-12,
		MaxPositionEmbeddings: spec.MaxPositions,
		ModelType:             "bert",
		NumAttentionHeads:     spec.Heads,
		NumHiddenLayers:       spec.Layers,
		PositionEmbeddingType: "absolute",
		TypeVocabSize:         2,
		VocabSize:             len(terms),
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	tok := cbert.TokenizerConfig{
		DoLowerCase: true, UnkToken: "[UNK]", SepToken: "[SEP]", PadToken: "[PAD]",
		ClsToken: "[CLS]", MaskToken: "[MASK]", TokenizeChineseChars: true, ModelMaxLength: spec.MaxPositions,
	}
	if err := writeJSON(filepath.Join(dir, "tokenizer_config.json"), tok); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(terms, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write random model: %w", err)
	}

	base := cbert.New[float32](cfg)
	base.Embeddings.Vocab = vocabulary.New(terms)
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))
	fill := func(p *nn.Param) {
		data := make([]float32, p.Size())
		for i := range data {
			data[i] = float32(rng.NormFloat64() * 0.1)
		}
		mat.SetData[float32](p, data)
	}
	// Embedding tables only expose parameters that have gradients through ForEachParam,
	// so walk their weights directly.
	nn.Apply(base, func(m nn.Model) {
		if e, ok := m.(*emb.Model); ok {
			for _, w := range e.Weights {
				fill(w)
			}
		}
	})
	nn.ForEachParam(base, fill)
	// BERT's own initialisation: unit LayerNorm gains, zero biases. Random gains and
	// biases would make the final LayerNorm bias dominate every mean-pooled vector, so
	// all texts would embed almost identically.
	nn.Apply(base, func(m nn.Model) {
		switch l := m.(type) {
		case *layernorm.Model:
			constant(l.W, 1)
			constant(l.B, 0)
		case *linear.Model:
			constant(l.B, 0)
		}
	})
	model := cbert.NewModelForSequenceEncoding(base)
	if err := nn.DumpToFile(model, filepath.Join(dir, "spago_model.bin")); err != nil {
		return fmt.Errorf("write random model: %w", err)
	}
	return nil
}

func constant(p *nn.Param, x float32) {
	data := make([]float32, p.Size())
	for i := range data {
		data[i] = x
	}
	mat.SetData[float32](p, data)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
