package embed

import (
	"fmt"
	"math"

	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/nn/activation"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/normalization/layernorm"
)

// bertEncoder runs the forward pass of a cybertron BERT model for inference only, over
// the weights cybertron loaded: a text's tokens are one [tokens × hidden] matrix, so every
// linear layer is one matrix product (kernels*.go) instead of spago's one matrix-vector
// product per token on an autograd graph. It computes what cybertron's
// ModelForSequenceEncoding.Encode with MeanPooling computes (TestEncoderMatchesCybertron).
// It is read-only after construction and safe for concurrent use with one scratch each.
type bertEncoder struct {
	hidden, heads, inter, maxPos int

	tokens    [][]float32 // token embeddings, one row per ID (spago's storage, not copied)
	positions [][]float32
	tokenType []float32 // type 0: memnode encodes one sequence
	embNorm   norm
	layers    []bertLayer
}

type norm struct {
	w, b []float32
	eps  float32
}

type bertLayer struct {
	qkvW, qkvB []float32 // queries of every head, then keys, then values: [3·hidden × hidden]
	outW, outB []float32
	attNorm    norm
	ff1W, ff1B []float32 // [inter × hidden]
	ff2W, ff2B []float32 // [hidden × inter]
	ffNorm     norm
}

func data(m mat.Tensor) []float32 { return mat.Data[float32](m.Value()) }

func newNorm(l *layernorm.Model) norm {
	return norm{w: data(l.W), b: data(l.B), eps: float32(l.Eps.Item().F64())}
}

// newBertEncoder takes the weights out of a loaded cybertron model. It refuses shapes it
// does not implement (an embedding projection, another activation), so a model it cannot
// run exactly is an error at open, not a wrong vector later.
func newBertEncoder(m *cbert.Model) (*bertEncoder, error) {
	c := m.Config
	e := &bertEncoder{hidden: c.HiddenSize, heads: c.NumAttentionHeads, inter: c.IntermediateSize, maxPos: c.MaxPositionEmbeddings}
	if m.Embeddings.Projector != nil {
		return nil, fmt.Errorf("embedding projection (embeddings %d ≠ hidden %d) is not supported", c.EmbeddingsSize, c.HiddenSize)
	}
	if e.heads <= 0 || e.hidden%e.heads != 0 {
		return nil, fmt.Errorf("hidden %d not divisible by %d heads", e.hidden, e.heads)
	}
	params := func(ps []*nn.Param) [][]float32 {
		out := make([][]float32, len(ps))
		for i, p := range ps {
			out[i] = data(p)
			if len(out[i]) != e.hidden {
				return nil
			}
		}
		return out
	}
	e.tokens = params(m.Embeddings.Tokens.Weights)
	e.positions = params(m.Embeddings.Positions.Weights)
	if e.tokens == nil || e.positions == nil {
		return nil, fmt.Errorf("embedding rows are not of size hidden %d", e.hidden)
	}
	if len(m.Embeddings.TokenTypes.Weights) == 0 {
		return nil, fmt.Errorf("no token type embeddings")
	}
	e.tokenType = data(m.Embeddings.TokenTypes.Weights[0])
	e.embNorm = newNorm(m.Embeddings.Norm)
	h := e.hidden
	for i, l := range m.Encoder.Layers {
		att := l.SelfAttention.Attention
		if len(att.Heads) != e.heads {
			return nil, fmt.Errorf("layer %d has %d heads, config says %d", i, len(att.Heads), e.heads)
		}
		var bl bertLayer
		bl.qkvW = make([]float32, 0, 3*h*h)
		bl.qkvB = make([]float32, 0, 3*h)
		for _, part := range []func(int) *linear.Model{
			func(j int) *linear.Model { return att.Heads[j].Query },
			func(j int) *linear.Model { return att.Heads[j].Key },
			func(j int) *linear.Model { return att.Heads[j].Value },
		} {
			for j := range att.Heads {
				bl.qkvW = append(bl.qkvW, data(part(j).W)...)
				bl.qkvB = append(bl.qkvB, data(part(j).B)...)
			}
		}
		bl.outW, bl.outB = data(att.OutputMerge.W), data(att.OutputMerge.B)
		bl.attNorm = newNorm(l.SelfAttention.Norm)
		if len(l.FF.MLP) != 3 {
			return nil, fmt.Errorf("layer %d: feed-forward block has %d parts, want 3", i, len(l.FF.MLP))
		}
		ff1, ok1 := l.FF.MLP[0].(*linear.Model)
		act, ok2 := l.FF.MLP[1].(*activation.Model)
		ff2, ok3 := l.FF.MLP[2].(*linear.Model)
		if !ok1 || !ok2 || !ok3 || act.Activation != activation.GELU {
			return nil, fmt.Errorf("layer %d: feed-forward block is not linear → GELU → linear", i)
		}
		bl.ff1W, bl.ff1B = data(ff1.W), data(ff1.B)
		bl.ff2W, bl.ff2B = data(ff2.W), data(ff2.B)
		bl.ffNorm = newNorm(l.FF.Norm)
		if len(bl.qkvW) != 3*h*h || len(bl.outW) != h*h || len(bl.ff1W) != e.inter*h || len(bl.ff2W) != h*e.inter {
			return nil, fmt.Errorf("layer %d: weight shapes do not match hidden %d, intermediate %d", i, h, e.inter)
		}
		e.layers = append(e.layers, bl)
	}
	return e, nil
}

// scratch holds one encoder call's buffers; reused across calls, grown as needed.
type scratch struct {
	x, qkv, ctx, tmp, ff, scores []float32
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// encode writes the mean-pooled last hidden states of the token IDs into out (len hidden).
func (e *bertEncoder) encode(ids []int, sc *scratch, out []float32) error {
	L, h := len(ids), e.hidden
	if L == 0 || L > e.maxPos || L > len(e.positions) {
		return fmt.Errorf("sequence of %d tokens (max %d)", L, e.maxPos)
	}
	dk := h / e.heads
	sc.x = grow(sc.x, L*h)
	sc.qkv = grow(sc.qkv, L*3*h)
	sc.ctx = grow(sc.ctx, L*h)
	sc.tmp = grow(sc.tmp, L*h)
	sc.ff = grow(sc.ff, L*e.inter)
	sc.scores = grow(sc.scores, L*L)
	x := sc.x
	for t, id := range ids {
		if id < 0 || id >= len(e.tokens) {
			return fmt.Errorf("token id %d outside the vocabulary", id)
		}
		row := x[t*h : (t+1)*h]
		tok, pos := e.tokens[id], e.positions[t]
		for j := range row {
			row[j] = tok[j] + pos[j] + e.tokenType[j]
		}
		e.embNorm.apply(row)
	}
	scale := float32(1 / math.Sqrt(float64(dk)))
	for i := range e.layers {
		l := &e.layers[i]
		gemmNT(L, 3*h, h, x, h, l.qkvW, h, sc.qkv, 3*h, l.qkvB)
		for hd := 0; hd < e.heads; hd++ {
			q, k, v := sc.qkv[hd*dk:], sc.qkv[h+hd*dk:], sc.qkv[2*h+hd*dk:]
			gemmNT(L, L, dk, q, 3*h, k, 3*h, sc.scores, L, nil)
			for t := 0; t < L; t++ {
				softmaxScaled(sc.scores[t*L:(t+1)*L], scale)
			}
			gemmNN(L, dk, L, sc.scores, L, v, 3*h, sc.ctx[hd*dk:], h)
		}
		gemmNT(L, h, h, sc.ctx, h, l.outW, h, sc.tmp, h, l.outB)
		addNorm(x, sc.tmp, l.attNorm, h)
		gemmNT(L, e.inter, h, x, h, l.ff1W, h, sc.ff, e.inter, l.ff1B)
		gelu(sc.ff)
		gemmNT(L, h, e.inter, sc.ff, e.inter, l.ff2W, e.inter, sc.tmp, h, l.ff2B)
		addNorm(x, sc.tmp, l.ffNorm, h)
	}
	out = out[:h]
	clear(out)
	for t := 0; t < L; t++ {
		for j, v := range x[t*h : (t+1)*h] {
			out[j] += v
		}
	}
	inv := 1 / float32(L)
	for j := range out {
		out[j] *= inv
	}
	return nil
}

// softmaxScaled replaces s by softmax(scale·s), as spago's ProdScalar then Softmax.
func softmaxScaled(s []float32, scale float32) {
	mx := float32(math.Inf(-1))
	for i := range s {
		s[i] *= scale
		mx = max(mx, s[i])
	}
	var sum float32
	for i, v := range s {
		e := float32(math.Exp(float64(v - mx)))
		s[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range s {
		s[i] *= inv
	}
}

// addNorm sets every row of x to LayerNorm(x + y).
func addNorm(x, y []float32, n norm, h int) {
	for off := 0; off < len(x); off += h {
		row := x[off : off+h]
		for j, v := range y[off : off+h] {
			row[j] += v
		}
		n.apply(row)
	}
}

// apply is spago's LayerNorm: (x − mean) / sqrt(var + eps) · w + b.
func (n norm) apply(x []float32) {
	var mean float32
	for _, v := range x {
		mean += v
	}
	mean /= float32(len(x))
	var vr float32
	for _, v := range x {
		d := v - mean
		vr += d * d
	}
	vr /= float32(len(x))
	std := float32(math.Sqrt(float64(vr + n.eps)))
	for j, v := range x {
		x[j] = (v-mean)/std*n.w[j] + n.b[j]
	}
}
