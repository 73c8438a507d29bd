package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/mcpserver"
)

// fakeMemory is a Memory whose methods are function fields.
type fakeMemory struct {
	search func(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error)
}

var _ mcpserver.Memory = (*fakeMemory)(nil)

func (f *fakeMemory) Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error) {
	return f.search(ctx, q)
}
func (f *fakeMemory) Timeline(context.Context, apitype.TimelineQuery) (apitype.Timeline, error) {
	return apitype.Timeline{}, nil
}
func (f *fakeMemory) Get(context.Context, []string) (apitype.Records, error) {
	return apitype.Records{}, nil
}
func (f *fakeMemory) SaveNote(context.Context, apitype.Note) (apitype.SaveResult, error) {
	return apitype.SaveResult{}, nil
}
func (f *fakeMemory) Forget(context.Context, []string) (apitype.ForgetResult, error) {
	return apitype.ForgetResult{}, nil
}
func (f *fakeMemory) Correct(context.Context, apitype.Correction) (apitype.SupersedeResult, error) {
	return apitype.SupersedeResult{}, nil
}
func (f *fakeMemory) Supersede(context.Context, apitype.Supersede) (apitype.SupersedeResult, error) {
	return apitype.SupersedeResult{}, nil
}

// eofSignal closes eof when the wrapped reader reports the end of input.
type eofSignal struct {
	io.ReadCloser
	once sync.Once
	eof  chan struct{}
}

func (r *eofSignal) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}

// rawSession runs a server over pipes and talks newline-delimited JSON-RPC to it directly.
type rawSession struct {
	t  *testing.T
	w  *io.PipeWriter
	in *eofSignal
	r  *bufio.Scanner
	// lines carries what the server writes; it is closed when its output ends.
	lines chan []byte
	done  chan error
}

func startRaw(t *testing.T, cfg mcpserver.Config) *rawSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	in := &eofSignal{ReadCloser: sr, eof: make(chan struct{})}
	srv := mcpserver.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	s := &rawSession{t: t, w: cw, in: in, r: bufio.NewScanner(cr), lines: make(chan []byte, 16), done: make(chan error, 1)}
	s.r.Buffer(nil, 4<<20)
	go func() {
		defer close(s.lines)
		for s.r.Scan() {
			s.lines <- append([]byte(nil), s.r.Bytes()...)
		}
	}()
	go func() {
		err := srv.Run(ctx, in, sw)
		sw.Close()
		s.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		cw.Close()
		cr.Close()
		if err := <-s.done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return s
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.w, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// reply is a JSON-RPC response as seen on the wire.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// replyDeadline bounds the wait for one answer; a server that stopped answering fails the
// test instead of hanging it.
const replyDeadline = 20 * time.Second

func (s *rawSession) next() reply {
	s.t.Helper()
	var line []byte
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("server output ended")
		}
		line = l
	case <-time.After(replyDeadline):
		s.t.Fatal("server did not answer")
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("server wrote a line that is not JSON: %q", line)
	}
	return r
}

func (s *rawSession) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := s.next(); r.Error != nil || string(r.ID) != `"init"` {
		s.t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func TestMalformedLinesGetErrorsAndServingGoesOn(t *testing.T) {
	s := startRaw(t, mcpserver.Config{Memory: &fakeMemory{}, MaxLineBytes: 1 << 20})
	s.initialize()
	cases := []struct {
		name, line string
		code       int64
		id         string
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, -32700, "null"},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, -32600, "2"},
		{"missing method", `{"jsonrpc":"2.0","id":3,"params":{}}`, -32600, "3"},
		{"non-object", `[1,2,3]`, -32600, "null"},
		{"non-object string", `"ping"`, -32600, "null"},
		{"huge line", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`, -32600, "null"},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":42}`, -32600, "6"},
	}
	for i, c := range cases {
		s.send(c.line)
		r := s.next()
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%s: want error %d with id %s, got %+v", c.name, c.code, c.id, r)
		}
		// The server still answers a well-formed request.
		id := fmt.Sprintf(`"ping-%d"`, i)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if r := s.next(); r.Error != nil || string(r.ID) != id {
			t.Fatalf("after %s: ping answered %+v", c.name, r)
		}
	}
}

func TestCallsWrittenBeforeEOFAreAnswered(t *testing.T) {
	release := make(chan struct{})
	mem := &fakeMemory{search: func(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return apitype.Results{}, ctx.Err()
		}
		return apitype.Results{Hits: []apitype.Hit{}}, nil
	}}
	s := startRaw(t, mcpserver.Config{Memory: mem})
	s.initialize()
	const calls = 5
	for i := range calls {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"q%d"}}}`, i, i))
	}
	s.w.Close()
	select {
	case <-s.in.eof:
	case <-time.After(replyDeadline):
		t.Fatal("server never read the end of input")
	}
	close(release) // the calls finish only after the server has seen EOF
	seen := map[string]bool{}
	for range calls {
		r := s.next()
		if r.Error != nil || len(r.Result) == 0 {
			t.Fatalf("call %s: %+v", r.ID, r)
		}
		if strings.Contains(string(r.Result), `"isError":true`) {
			t.Fatalf("call %s answered with a tool error: %s", r.ID, r.Result)
		}
		seen[string(r.ID)] = true
	}
	if len(seen) != calls {
		t.Fatalf("answered ids %v, want %d distinct", seen, calls)
	}
	if l, ok := <-s.lines; ok {
		t.Fatalf("unexpected line after the answers: %q", l)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("server: %v", err)
	}
	s.done <- nil
}
