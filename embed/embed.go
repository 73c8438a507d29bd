package embed

import (
	"context"
	"errors"
)

// DefaultModel is the sentence-transformers model memnode uses when none is configured.
const DefaultModel = "sentence-transformers/all-MiniLM-L6-v2"

// ErrNoModel means no usable model is installed; search must fall back to FTS alone.
var ErrNoModel = errors.New("no embedding model installed")

// Embedder turns texts into vectors of length Dim(). Implementations return
// L2-normalised vectors, so cosine similarity is a plain dot product.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// ModelID identifies the vector space; vectors with different IDs must not be compared.
	ModelID() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Close releases the model. It is idempotent.
	Close() error
}
