package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for the line transport.
const (
	// DefaultMaxLineBytes bounds one JSON-RPC line; a longer line is discarded up to its
	// newline and answered with an error (the SDK's own transport gives up the session).
	DefaultMaxLineBytes = 16 << 20
	// DefaultDrainTimeout bounds how long, after the client closed its input, the server
	// keeps answering calls that were already read.
	DefaultDrainTimeout = 30 * time.Second
)

// lineTransport is newline-delimited JSON-RPC over a reader and a writer that, unlike
// mcp.IOTransport, survives bad input: a line that is not a JSON-RPC message is answered
// with a JSON-RPC error and the next line is read; and at EOF every call already read is
// answered before the connection reports the end.
type lineTransport struct {
	in      io.ReadCloser
	out     io.WriteCloser
	maxLine int
	drain   time.Duration
	conn    *lineConn
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		out:      t.out,
		in:       t.in,
		drain:    t.drain,
		incoming: make(chan jsonrpc.Message),
		inputEnd: make(chan struct{}),
		closed:   make(chan struct{}),
		pending:  make(map[jsonrpc.ID]struct{}),
		idle:     make(chan struct{}, 1),
	}
	c.wg.Add(1)
	go c.readLoop(t.maxLine)
	t.conn = c
	return c, nil
}

// waitInputEnded waits for the reader goroutine when the input has ended. When it has not
// (ctx ended first) the goroutine stays blocked in a read nothing can interrupt on a
// non-pollable stdin, and ends with the process.
func (t *lineTransport) waitInputEnded() {
	if t.conn == nil {
		return
	}
	select {
	case <-t.conn.inputEnd:
		t.conn.wg.Wait()
	default:
	}
}

// lineConn implements mcp.Connection; see lineTransport.
type lineConn struct {
	in    io.ReadCloser
	out   io.WriteCloser
	drain time.Duration

	writeMu sync.Mutex

	incoming chan jsonrpc.Message
	inputEnd chan struct{} // closed by readLoop when the input ended; readErr says why
	readErr  error
	wg       sync.WaitGroup // readLoop

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // calls read and not yet answered
	idle    chan struct{}           // signalled when pending drops to empty

	closeOnce sync.Once
	closed    chan struct{}
}

var _ mcp.Connection = (*lineConn)(nil)

// readLoop reads lines until the input ends, answering malformed ones itself and handing
// well-formed messages to Read.
func (c *lineConn) readLoop(maxLine int) {
	defer c.wg.Done()
	defer close(c.inputEnd)
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readLine(br, maxLine)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			msg, rpcErr := decodeLine(line, tooLong, maxLine)
			if rpcErr != nil {
				if werr := c.writeRaw(rpcErr); werr != nil {
					c.readErr = werr
					return
				}
			} else {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					c.readErr = io.EOF
					return
				}
			}
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// readLine returns the next line without its newline. A line longer than max is consumed
// up to its newline but not kept (tooLong). err is the reader's error (io.EOF at the end),
// returned together with a last unterminated line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+1 { // +1: the newline itself
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), tooLong, err
	}
}

// errorLine is a JSON-RPC error response the transport writes itself.
type errorLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

func rpcError(id json.RawMessage, code int64, msg string) *errorLine {
	if id == nil {
		id = json.RawMessage("null")
	}
	return &errorLine{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: msg}}
}

// decodeLine turns one line into a message, or into the error reply the JSON-RPC 2.0
// specification asks for: -32700 for text that is not JSON, -32600 for JSON that is not a
// request, a notification or a response.
func decodeLine(line []byte, tooLong bool, maxLine int) (jsonrpc.Message, *errorLine) {
	if tooLong {
		return nil, rpcError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes", maxLine))
	}
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return nil, rpcError(nil, jsonrpc.CodeParseError, "parse error: not valid JSON")
	}
	var head map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &head) != nil {
		return nil, rpcError(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be one JSON object (batches are not supported)")
	}
	id := validID(head["id"])
	if string(head["jsonrpc"]) != `"2.0"` {
		return nil, rpcError(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	_, hasMethod := head["method"]
	_, hasResult := head["result"]
	_, hasError := head["error"]
	if !hasMethod && !hasResult && !hasError {
		return nil, rpcError(id, jsonrpc.CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, rpcError(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// validID returns raw when it is a usable JSON-RPC id (a string or a number), else nil.
func validID(raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

// Read returns the next message. When the input has ended it first waits until every call
// it returned has been answered (bounded by the drain timeout), so requests written just
// before EOF are not dropped.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[req.ID] = struct{}{}
			c.mu.Unlock()
		}
		return msg, nil
	case <-c.inputEnd:
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	timer := time.NewTimer(c.drain)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-c.idle:
		case <-timer.C:
			return nil, fmt.Errorf("input ended with %d call(s) unanswered after %s: %w", n, c.drain, io.EOF)
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	return nil, io.EOF
}

// Write sends one message; a response retires its call.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		empty := len(c.pending) == 0
		c.mu.Unlock()
		if empty {
			select {
			case c.idle <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

func (c *lineConn) writeRaw(v *errorLine) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode error reply: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	if _, err := c.out.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

// Close closes both streams; it is idempotent. The reader goroutine ends when the input
// does (closing an os.Stdin that is not pollable cannot interrupt a blocked read).
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.writeMu.Lock()
		close(c.closed)
		c.writeMu.Unlock()
		err = errors.Join(c.in.Close(), c.out.Close())
	})
	return err
}

// SessionID implements mcp.Connection; stdio has no session ID.
func (c *lineConn) SessionID() string { return "" }
