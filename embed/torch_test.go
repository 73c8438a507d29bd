package embed

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// torchTensor is one float32 entry of a PyTorch state dict.
type torchTensor struct {
	name  string
	shape []int
	data  []float32
}

// torchStateDict serialises tensors the way torch.save does since PyTorch 1.6: a zip
// holding archive/data.pkl (a protocol-2 pickle of {name: _rebuild_tensor_v2(...)}
// whose storages are persistent IDs) and one raw little-endian file per storage. This
// lets Pull's tests feed cybertron's real converter without Python.
func torchStateDict(tb testing.TB, tensors []torchTensor) []byte {
	tb.Helper()
	var pkl bytes.Buffer
	op := func(b ...byte) { pkl.Write(b) }
	str := func(s string) {
		op('X')
		binary.Write(&pkl, binary.LittleEndian, uint32(len(s)))
		pkl.WriteString(s)
	}
	integer := func(n int) {
		op('J')
		binary.Write(&pkl, binary.LittleEndian, int32(n))
	}
	global := func(module, name string) { fmt.Fprintf(&pkl, "c%s\n%s\n", module, name) }

	op(0x80, 2) // PROTO 2
	op('}')     // EMPTY_DICT
	op('(')     // MARK
	for i, t := range tensors {
		str(t.name)
		global("torch._utils", "_rebuild_tensor_v2")
		op('(') // args
		op('(') // persistent id tuple
		str("storage")
		global("torch", "FloatStorage")
		str(fmt.Sprint(i))
		str("cpu")
		integer(len(t.data))
		op('t') // TUPLE
		op('Q') // BINPERSID
		integer(0)
		op('(')
		for _, d := range t.shape {
			integer(d)
		}
		op('t')
		op('(')
		stride := 1
		strides := make([]int, len(t.shape))
		for j := len(t.shape) - 1; j >= 0; j-- {
			strides[j] = stride
			stride *= t.shape[j]
		}
		for _, s := range strides {
			integer(s)
		}
		op('t')
		op(0x89) // NEWFALSE: requires_grad
		op('}')  // backward hooks (unused)
		op('t')
		op('R') // REDUCE
	}
	op('u') // SETITEMS
	op('.') // STOP

	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	add := func(name string, b []byte) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
	}
	add("archive/data.pkl", pkl.Bytes())
	for i, t := range tensors {
		raw := make([]byte, 4*len(t.data))
		for j, x := range t.data {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
		}
		add(fmt.Sprintf("archive/data/%d", i), raw)
	}
	add("archive/version", []byte("3\n"))
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// bertStateDict returns randomly initialised tensors named and shaped like a Hugging
// Face BertModel checkpoint (as in sentence-transformers' pytorch_model.bin, without
// the "bert." prefix).
func bertStateDict(vocab, hidden, layers, inter, positions int, seed uint64) []torchTensor {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var ts []torchTensor
	add := func(name string, init string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			switch init {
			case "one":
				data[i] = 1
			case "zero":
			default:
				data[i] = float32(rng.NormFloat64() * 0.1)
			}
		}
		ts = append(ts, torchTensor{name: name, shape: shape, data: data})
	}
	add("embeddings.word_embeddings.weight", "", vocab, hidden)
	add("embeddings.position_embeddings.weight", "", positions, hidden)
	add("embeddings.token_type_embeddings.weight", "", 2, hidden)
	add("embeddings.LayerNorm.weight", "one", hidden)
	add("embeddings.LayerNorm.bias", "zero", hidden)
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, m := range []string{"query", "key", "value"} {
			add(p+"attention.self."+m+".weight", "", hidden, hidden)
			add(p+"attention.self."+m+".bias", "zero", hidden)
		}
		add(p+"attention.output.dense.weight", "", hidden, hidden)
		add(p+"attention.output.dense.bias", "zero", hidden)
		add(p+"attention.output.LayerNorm.weight", "one", hidden)
		add(p+"attention.output.LayerNorm.bias", "zero", hidden)
		add(p+"intermediate.dense.weight", "", inter, hidden)
		add(p+"intermediate.dense.bias", "zero", inter)
		add(p+"output.dense.weight", "", hidden, inter)
		add(p+"output.dense.bias", "zero", hidden)
		add(p+"output.LayerNorm.weight", "one", hidden)
		add(p+"output.LayerNorm.bias", "zero", hidden)
	}
	add("pooler.dense.weight", "", hidden, hidden)
	add("pooler.dense.bias", "zero", hidden)
	return ts
}
