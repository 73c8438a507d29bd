// Package localnet is how memnode's processes on one machine reach their node without being
// impersonated by another local program: a Unix socket inside the 0700 data dir whose peer
// must run as the same uid, and, for clients that ask for TCP, a listener that must prove it
// holds the data dir's token before the client sends anything (see DESIGN.md).
//
// It uses the standard library only: the lean hook binary links it.
package localnet

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memnode/memnode/internal/datadir"
)

// Headers of the proof exchange on GET /health.
const (
	// ChallengeHeader carries the client's fresh random nonce (hex).
	ChallengeHeader = "X-Memnode-Challenge"
	// ProofHeader carries the listener's answer: Proof(token, nonce).
	ProofHeader = "X-Memnode-Proof"
)

// Sentinel errors.
var (
	// ErrNotOurNode means something answers where the node should be but did not prove it is
	// this data dir's node (another user's program squatting the port, a stale listener).
	// Nothing was sent to it.
	ErrNotOurNode = errors.New("the listener is not this data dir's memnode node (it did not prove it holds the token)")
	// ErrSocketPath means the data dir's path is too long for a Unix socket address.
	ErrSocketPath = errors.New("data dir path too long for a unix socket (use a shorter MEMNODE_DATA_DIR or MEMNODE_TRANSPORT=tcp)")
)

// maxSocketPath is the longest socket path every Unix accepts (sun_path is 104 bytes on
// macOS and the BSDs, 108 on Linux, including the terminating NUL).
const maxSocketPath = 103

// SocketPath is the node's socket in dataDir.
func SocketPath(dataDir string) string { return datadir.Dir(dataDir).Socket() }

// Proof is the listener's answer to a challenge: hex HMAC-SHA256 keyed with the token. It
// shows the listener can read the token without revealing it.
func Proof(token, challenge string) string {
	m := hmac.New(sha256.New, []byte(token))
	io.WriteString(m, "memnode-proof-v1\n")
	io.WriteString(m, challenge)
	return hex.EncodeToString(m.Sum(nil))
}

// ValidChallenge reports whether c has the shape of a challenge (16 to 64 bytes, hex).
func ValidChallenge(c string) bool {
	if len(c) < 32 || len(c) > 128 {
		return false
	}
	_, err := hex.DecodeString(c)
	return err == nil
}

// NewChallenge returns a fresh random challenge.
func NewChallenge() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return hex.EncodeToString(b)
}

// CheckProof reports whether an answer proves the listener holds the data dir's token.
func CheckProof(dataDir, challenge, proof string) bool {
	tok, err := ReadToken(dataDir)
	if err != nil {
		return false
	}
	return hmac.Equal([]byte(proof), []byte(Proof(tok, challenge)))
}

// ReadToken returns the data dir's API token. Its content is never printed or logged.
func ReadToken(dataDir string) (string, error) {
	b, err := os.ReadFile(datadir.Dir(dataDir).Token())
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("read token: %w", os.ErrNotExist)
	}
	return tok, nil
}

// Dialer connects to the node of one data dir. The zero TCP field means the Unix socket.
type Dialer struct {
	// DataDir holds the socket and the token.
	DataDir string
	// TCPAddr is the node's TCP address ("127.0.0.1:38800"); used only when TCP is set.
	TCPAddr string
	// TCP makes the dialer use TCPAddr instead of the socket (MEMNODE_TRANSPORT=tcp).
	TCP bool
	// Timeout bounds one dial including the proof exchange; zero means 2 s.
	Timeout time.Duration
}

// NewDialer returns the dialer of the node of dataDir whose TCP port is port; useTCP picks
// the port instead of the socket.
func NewDialer(dataDir string, port int, useTCP bool) Dialer {
	return Dialer{DataDir: dataDir, TCPAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), TCP: useTCP}
}

// BaseURL is the URL prefix requests through this dialer use. Its host is always the TCP
// address, so the node's Host check accepts it on either transport.
func (d Dialer) BaseURL() string { return "http://" + d.TCPAddr }

// Transport returns an HTTP transport that dials only through d (never a proxy).
func (d Dialer) Transport() *http.Transport {
	return &http.Transport{
		Proxy:               nil, // the node is local; never route it through a proxy
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx) },
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
}

// DialContext connects to the node. Over the socket it checks that the socket and the
// process behind it belong to this uid; over TCP that the listener runs as this uid (Linux)
// and answers a fresh challenge with the token's proof. Only then is the connection
// returned, so no request (and no token) ever reaches an impostor.
func (d Dialer) DialContext(ctx context.Context) (net.Conn, error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	nd := net.Dialer{Timeout: timeout}
	if !d.TCP {
		return dialUnix(ctx, &nd, SocketPath(d.DataDir))
	}
	tok, err := ReadToken(d.DataDir)
	if err != nil {
		return nil, err
	}
	c, err := nd.DialContext(ctx, "tcp", d.TCPAddr)
	if err != nil {
		return nil, err
	}
	if err := prove(ctx, c, d.TCPAddr, tok, timeout); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func dialUnix(ctx context.Context, nd *net.Dialer, path string) (net.Conn, error) {
	if len(path) > maxSocketPath {
		return nil, ErrSocketPath
	}
	fi, err := os.Lstat(path)
	if err != nil {
		// ENOENT: the node is not running (callers treat it like a refused connection).
		return nil, fmt.Errorf("dial %s: %w", path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%w: %s belongs to uid %d", ErrNotOurNode, path, st.Uid)
	}
	c, err := nd.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if uid, err := peerUID(c); err == nil && uid != os.Getuid() {
		c.Close()
		return nil, fmt.Errorf("%w: the process behind %s runs as uid %d", ErrNotOurNode, path, uid)
	}
	return c, nil
}

// prove runs the proof exchange on a fresh TCP connection: GET /health with a challenge;
// the answer must carry the proof. The connection stays open for the caller's requests.
func prove(ctx context.Context, c net.Conn, host, token string, timeout time.Duration) error {
	if uid, err := peerUID(c); err == nil && uid != os.Getuid() {
		return fmt.Errorf("%w: port %s is held by uid %d", ErrNotOurNode, host, uid)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	defer c.SetDeadline(time.Time{})
	challenge := NewChallenge()
	if _, err := fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\nUser-Agent: memnode\r\n%s: %s\r\n\r\n", host, ChallengeHeader, challenge); err != nil {
		return fmt.Errorf("prove node: %w", err)
	}
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotOurNode, err)
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotOurNode, err)
	}
	if !hmac.Equal([]byte(resp.Header.Get(ProofHeader)), []byte(Proof(token, challenge))) {
		return ErrNotOurNode
	}
	if br.Buffered() > 0 || resp.Close {
		// Bytes beyond the answer (or a closing answer): not the node's HTTP server.
		return fmt.Errorf("%w: unexpected bytes after the proof", ErrNotOurNode)
	}
	return nil
}

// Refused reports whether err means nothing listens (a node to start): a refused TCP
// connection, or a socket that does not exist or has no listener.
func Refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}
