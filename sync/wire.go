package sync

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/memnode/memnode/store"
)

// Message types on the sync and pairing protocols. See DESIGN.md, "Wire format".
const (
	msgHello     byte = 1
	msgWant      byte = 2
	msgOps       byte = 3
	msgDone      byte = 4
	msgError     byte = 5
	msgPairHello byte = 6
	msgChallenge byte = 7
	msgProof     byte = 8
	msgWelcome   byte = 9
	// Snapshot messages: only on ProtocolSyncS (see DESIGN.md, "Snapshots").
	msgSnapWant  byte = 10
	msgSnapRows  byte = 11
	msgSnapEnd   byte = 12
	msgSnapBegin byte = 13
)

// Value tags of a SnapRows value.
const (
	valNull  byte = 0
	valInt   byte = 1 // zigzag varint
	valText  byte = 2
	valBlob  byte = 3
	valLimit      = maxPayloadLen // one text or blob value
	// A SnapRows message holds at most maxSnapRows × maxSnapColumns values, so decoding
	// one allocates at most a few MiB of value slots whatever its bytes claim.
	maxSnapColumns = 32
	maxSnapRows    = 10_000
)

// Decoder limits: a peer can make us allocate at most this much per message.
const (
	MaxMessageSize = 8 << 20 // one framed message
	maxStringLen   = 64 << 10
	maxBlobLen     = 4 << 20 // a group state
	// maxPayloadLen bounds one op payload: far above memory.MaxRecordSize, which every
	// record is checked against where it enters, so an op a replica accepted always
	// travels, even one stored before that limit existed (up to this size).
	maxPayloadLen  = MaxMessageSize - 1<<20
	maxListLen     = 100_000
	opsMessageSoft = 2 << 20 // a sender starts a new Ops message past this many bytes
)

// ErrMalformed reports a message that does not decode.
var ErrMalformed = errors.New("malformed sync message")

// message is one decoded protocol message; exactly one of the typed fields is meaningful,
// selected by Type.
type message struct {
	Type byte

	// Hello
	GroupID string
	Name    string
	VV      store.VersionVector
	Group   []byte // JSON group state (members only; the key travels inside Noise)

	// Want
	Wants []want

	// Ops: all of one origin, seqs strictly increasing.
	Origin string
	Ops    []store.Op

	// Error
	Text string

	// SnapRows: rows of one table, each a value per column (nil, int64, string, []byte).
	// SnapBegin carries the snapshot's vector in VV and its row count in Total; SnapEnd
	// the vector again. SnapWant carries the cursor to resume after in From.
	Table   string
	Columns []string
	Rows    [][]any
	Total   uint64
	From    store.SnapshotCursor

	// Pairing
	Nonce  []byte // PairHello, Challenge
	MAC    []byte // Proof, Welcome
	Member []byte // PairHello: the joiner's member record as JSON
}

type want struct {
	Origin string
	After  uint64
}

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

// optBytes distinguishes nil (0) from empty (1) so a purged payload stays purged.
func (e *encoder) optBytes(p []byte) {
	if p == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(p)) + 1)
	e.b = append(e.b, p...)
}

// encodeMessage renders m as its type byte followed by its body.
func encodeMessage(m *message) []byte {
	e := &encoder{b: []byte{m.Type}}
	switch m.Type {
	case msgHello:
		e.str(m.GroupID)
		e.str(m.Name)
		e.uvarint(uint64(len(m.VV)))
		for _, o := range sortedOrigins(m.VV) {
			e.str(o)
			e.uvarint(m.VV[o])
		}
		e.bytes(m.Group)
	case msgWant:
		e.uvarint(uint64(len(m.Wants)))
		for _, w := range m.Wants {
			e.str(w.Origin)
			e.uvarint(w.After)
		}
	case msgOps:
		e.str(m.Origin)
		e.uvarint(uint64(len(m.Ops)))
		var prev uint64
		for _, op := range m.Ops {
			e.uvarint(op.Seq - prev) // seqs are contiguous: the delta is almost always 1
			prev = op.Seq
			e.uvarint(op.HLC)
			e.str(op.Kind)
			e.str(op.RecordID)
			e.optBytes(op.Payload)
		}
	case msgDone:
	case msgError:
		e.str(m.Text)
	case msgSnapWant:
		e.str(m.From.Table)
		e.str(m.From.Key)
		e.uvarint(m.From.Seq)
	case msgSnapBegin:
		e.vv(m.VV)
		e.uvarint(m.Total)
	case msgSnapRows:
		e.str(m.Table)
		e.uvarint(uint64(len(m.Columns)))
		for _, c := range m.Columns {
			e.str(c)
		}
		e.uvarint(uint64(len(m.Rows)))
		for _, row := range m.Rows {
			for _, v := range row {
				e.value(v)
			}
		}
	case msgSnapEnd:
		e.vv(m.VV)
	case msgPairHello:
		e.bytes(m.Nonce)
		e.bytes(m.Member)
	case msgChallenge:
		e.bytes(m.Nonce)
	case msgProof:
		e.bytes(m.MAC)
	case msgWelcome:
		e.bytes(m.MAC)
		e.bytes(m.Group)
	}
	return e.b
}

// vv encodes a vector as a list of origin and seq, origins sorted.
func (e *encoder) vv(vv store.VersionVector) {
	e.uvarint(uint64(len(vv)))
	for _, o := range sortedOrigins(vv) {
		e.str(o)
		e.uvarint(vv[o])
	}
}

// value encodes one SnapRows value; a row has exactly one per column (encodeMessage's
// caller, the snapshot reader, guarantees it).
func (e *encoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, valNull)
	case int64:
		e.b = append(e.b, valInt)
		e.b = binary.AppendVarint(e.b, x)
	case string:
		e.b = append(e.b, valText)
		e.str(x)
	case []byte:
		e.b = append(e.b, valBlob)
		e.bytes(x)
	default: // SQLite gives no other type; never sent as something else silently
		panic(fmt.Sprintf("snapshot value of type %T", v))
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrMalformed
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) raw(n uint64, limit int) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(limit) || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	p := make([]byte, n)
	copy(p, d.b[:n])
	d.b = d.b[n:]
	return p
}

func (d *decoder) bytes(limit int) []byte { return d.raw(d.uvarint(), limit) }
func (d *decoder) str() string            { return string(d.bytes(maxStringLen)) }

func (d *decoder) optBytes() []byte {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	return d.raw(n-1, maxPayloadLen)
}

func (d *decoder) value() any {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return nil
	}
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case valNull:
		return nil
	case valInt:
		v, n := binary.Varint(d.b)
		if n <= 0 {
			d.fail()
			return nil
		}
		d.b = d.b[n:]
		return v
	case valText:
		return string(d.bytes(valLimit))
	case valBlob:
		p := d.bytes(valLimit)
		if p == nil {
			p = []byte{}
		}
		return p
	}
	d.fail()
	return nil
}

// vv reads a vector (a list of origin and seq).
func (d *decoder) vv() store.VersionVector {
	n := d.count(2)
	vv := make(store.VersionVector, n)
	for i := 0; i < n && d.err == nil; i++ {
		o := d.str()
		vv[o] = d.uvarint()
	}
	return vv
}

// count reads a list length, refusing lengths that the remaining bytes cannot hold (every
// element takes at least minSize bytes), so a tiny message cannot make us allocate much.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > maxListLen || n*uint64(minSize) > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

// decodeMessage parses one message body (type byte first). It never panics and bounds every
// allocation by the input size and the limits above.
func decodeMessage(b []byte) (*message, error) {
	if len(b) == 0 || len(b) > MaxMessageSize {
		return nil, ErrMalformed
	}
	m := &message{Type: b[0]}
	d := &decoder{b: b[1:]}
	switch m.Type {
	case msgHello:
		m.GroupID = d.str()
		m.Name = d.str()
		n := d.count(2)
		m.VV = make(store.VersionVector, n)
		for i := 0; i < n && d.err == nil; i++ {
			o := d.str()
			m.VV[o] = d.uvarint()
		}
		m.Group = d.bytes(maxBlobLen)
	case msgWant:
		n := d.count(2)
		m.Wants = make([]want, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			m.Wants = append(m.Wants, want{Origin: d.str(), After: d.uvarint()})
		}
	case msgOps:
		m.Origin = d.str()
		if m.Origin == "" {
			d.fail()
		}
		n := d.count(5)
		m.Ops = make([]store.Op, 0, n)
		var prev uint64
		for i := 0; i < n && d.err == nil; i++ {
			delta := d.uvarint()
			if delta == 0 || prev+delta < prev {
				d.fail() // seqs must strictly increase and start at 1 or later
				break
			}
			prev += delta
			op := store.Op{Origin: m.Origin, Seq: prev, HLC: d.uvarint(), Kind: d.str(), RecordID: d.str()}
			op.Payload = d.optBytes()
			m.Ops = append(m.Ops, op)
		}
	case msgDone:
	case msgError:
		m.Text = d.str()
	case msgSnapWant:
		m.From = store.SnapshotCursor{Table: d.str(), Key: d.str(), Seq: d.uvarint()}
	case msgSnapBegin:
		m.VV = d.vv()
		m.Total = d.uvarint()
	case msgSnapRows:
		m.Table = d.str()
		if m.Table == "" {
			d.fail()
		}
		nc := d.count(1)
		if nc == 0 || nc > maxSnapColumns {
			d.fail()
		}
		m.Columns = make([]string, 0, nc)
		for i := 0; i < nc && d.err == nil; i++ {
			m.Columns = append(m.Columns, d.str())
		}
		nr := d.count(max(nc, 1)) // every value takes at least its tag byte
		if nr > maxSnapRows {
			d.fail()
		}
		m.Rows = make([][]any, 0, nr)
		for i := 0; i < nr && d.err == nil; i++ {
			row := make([]any, nc)
			for j := range row {
				row[j] = d.value()
			}
			m.Rows = append(m.Rows, row)
		}
	case msgSnapEnd:
		m.VV = d.vv()
	case msgPairHello:
		m.Nonce = d.bytes(64)
		m.Member = d.bytes(maxStringLen)
	case msgChallenge:
		m.Nonce = d.bytes(64)
	case msgProof:
		m.MAC = d.bytes(64)
	case msgWelcome:
		m.MAC = d.bytes(64)
		m.Group = d.bytes(maxBlobLen)
	default:
		return nil, fmt.Errorf("message type %d: %w", m.Type, ErrMalformed)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail() // trailing bytes: a different protocol version or garbage
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// writeMessage frames m as uvarint(length) ‖ body.
func writeMessage(w *bufio.Writer, m *message) (int, error) {
	body := encodeMessage(m)
	if len(body) > MaxMessageSize {
		return 0, fmt.Errorf("write message: %d bytes: %w", len(body), ErrTooLarge)
	}
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(body)))
	if _, err := w.Write(hdr[:n]); err != nil {
		return 0, fmt.Errorf("write message: %w", err)
	}
	if _, err := w.Write(body); err != nil {
		return 0, fmt.Errorf("write message: %w", err)
	}
	return n + len(body), nil
}

// ErrTooLarge reports a message over MaxMessageSize.
var ErrTooLarge = errors.New("sync message too large")

// readMessage reads one framed message, refusing frames over MaxMessageSize before
// allocating them.
func readMessage(r *bufio.Reader) (*message, int, error) {
	size, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, 0, fmt.Errorf("read message: %w", err)
	}
	if size == 0 || size > MaxMessageSize {
		return nil, 0, fmt.Errorf("read message: %d bytes: %w", size, ErrTooLarge)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, fmt.Errorf("read message: %w", err)
	}
	m, err := decodeMessage(body)
	if err != nil {
		return nil, 0, fmt.Errorf("read message: %w", err)
	}
	return m, uvarintLen(size) + int(size), nil
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}
