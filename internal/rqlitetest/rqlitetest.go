// Package rqlitetest starts real rqlited processes (bin/rqlited, built by `make rqlited`) on
// 127.0.0.1 for team memory's tests: one node or a cluster, an auth file, kill -9, restart.
package rqlitetest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testbin"
)

// User is one entry of rqlite's auth file.
type User struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Perms    []string `json:"perms"`
}

// Admin is the user every cluster gets, with every permission; nodes join as it.
const Admin = "rqadmin"

// Options configure a cluster.
type Options struct {
	Nodes int    // voters; default 1
	Users []User // written to the auth file beside Admin
	// TLS serves the HTTP API over HTTPS with a certificate for 127.0.0.1 from a CA made for
	// the cluster (Cluster.CACert holds it, PEM).
	TLS bool
}

// Cluster is a running rqlite cluster whose processes are killed when the test ends.
type Cluster struct {
	tb            testing.TB
	bin           string
	auth          string
	AdminPassword string
	Nodes         []*Node
	// CACert is the PEM certificate of the CA that signed the nodes' HTTPS certificates
	// (Options.TLS; nil without).
	CACert         []byte
	certFile, keyF string
	pool           *x509.CertPool
}

// Node is one rqlited process.
type Node struct {
	c        *Cluster
	ID       string
	HTTPAddr string
	RaftAddr string
	Dir      string
	join     string
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	log      *os.File
}

// Binary returns the path of bin/rqlited (`make rqlited`), or, when it is missing, of an
// rqlited internal/testbin builds from tools/rqlited once for every test process and
// checkout (cached by tools/rqlited's go.mod and go.sum, built under a lock: two packages'
// tests starting together used to build it twice at once, ~230 s of a cold run). Without
// the Go toolchain's module access it skips the test, except under MEMNODE_CI=1 where a
// missing rqlited is a failure.
func Binary(tb testing.TB) string {
	tb.Helper()
	root, err := testbin.ModuleRoot()
	if err != nil {
		tb.Fatalf("rqlited: %v", err)
	}
	bin := filepath.Join(root, "bin", "rqlited")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	dir, err := testbin.Build(testbin.Set{Dir: filepath.Join(root, "tools", "rqlited"),
		Bins: []testbin.Spec{{Name: "rqlited", Pkg: "github.com/rqlite/rqlite/v8/cmd/rqlited"}}})
	if err != nil {
		if os.Getenv("MEMNODE_CI") == "1" {
			tb.Fatalf("build rqlited: %v", err)
		}
		tb.Skipf("rqlited is missing and could not be built (run `make rqlited`): %v", err)
	}
	return filepath.Join(dir, "rqlited")
}

// Start starts a cluster of opts.Nodes voters with an auth file and waits until it has a
// leader every node knows.
func Start(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: starts real rqlited processes")
	}
	if opts.Nodes <= 0 {
		opts.Nodes = 1
	}
	c := &Cluster{tb: tb, bin: Binary(tb), AdminPassword: "admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	c.auth = filepath.Join(tb.TempDir(), "auth.json")
	c.SetUsers(opts.Users)
	if opts.TLS {
		c.makeCerts(tb)
	}
	for i := 0; i < opts.Nodes; i++ {
		n := &Node{c: c, ID: "n" + strconv.Itoa(i+1), HTTPAddr: freeAddr(tb), RaftAddr: freeAddr(tb), Dir: filepath.Join(tb.TempDir(), "data")}
		if i > 0 {
			n.join = c.Nodes[0].RaftAddr
		}
		c.Nodes = append(c.Nodes, n)
	}
	tb.Cleanup(c.Stop)
	for _, n := range c.Nodes {
		n.start(tb)
		if n.join == "" {
			c.WaitLeader(tb, 30*time.Second)
		}
	}
	c.WaitLeader(tb, 30*time.Second)
	return c
}

// SetUsers rewrites the cluster's auth file with users (beside Admin): rqlited reads it at
// start, so the change takes effect on each node as it restarts (a credential rotation).
func (c *Cluster) SetUsers(users []User) {
	c.tb.Helper()
	b, err := json.Marshal(append([]User{{Username: Admin, Password: c.AdminPassword, Perms: []string{"all"}}}, users...))
	if err != nil {
		c.tb.Fatal(err)
	}
	if err := os.WriteFile(c.auth, b, 0o600); err != nil {
		c.tb.Fatal(err)
	}
}

// URLs are the nodes' HTTP API base URLs.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.URL()
	}
	return out
}

// URL is the node's HTTP API base URL (https:// with Options.TLS).
func (n *Node) URL() string {
	if n.c.CACert != nil {
		return "https://" + n.HTTPAddr
	}
	return "http://" + n.HTTPAddr
}

// makeCerts makes a CA and, signed by it, one certificate for 127.0.0.1 that every node
// serves, written to the test's temp dir.
func (c *Cluster) makeCerts(tb testing.TB) {
	tb.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memnode test team CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	c.certFile, c.keyF = filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key")
	for path, block := range map[string]*pem.Block{c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyF: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	c.CACert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	c.pool = x509.NewCertPool()
	c.pool.AddCert(caCert)
}

func (n *Node) start(tb testing.TB) {
	tb.Helper()
	args := []string{"-node-id", n.ID, "-http-addr", n.HTTPAddr, "-raft-addr", n.RaftAddr, "-auth", n.c.auth,
		"-raft-election-timeout", "500ms", "-raft-timeout", "500ms"}
	if n.c.certFile != "" {
		args = append(args, "-http-cert", n.c.certFile, "-http-key", n.c.keyF)
	}
	if n.join != "" {
		args = append(args, "-join", n.join, "-join-as", Admin, "-join-interval", "200ms", "-join-attempts", "50")
	}
	args = append(args, n.Dir)
	log, err := os.OpenFile(filepath.Join(filepath.Dir(n.Dir), n.ID+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(n.c.bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		tb.Fatalf("start rqlited %s: %v", n.ID, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	n.mu.Lock()
	n.cmd, n.done, n.log = cmd, done, log
	n.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for n.get("/readyz?noleader") != http.StatusOK {
		select {
		case <-done:
			tb.Fatalf("rqlited %s exited at start; its log:\n%s", n.ID, n.Log())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("rqlited %s did not answer within 30s; its log:\n%s", n.ID, n.Log())
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

// Log returns what the node wrote to its log so far.
func (n *Node) Log() string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(n.Dir), n.ID+".log"))
	return string(b)
}

// get asks the node's API as the admin and returns the status code (0 when unreachable).
func (n *Node) get(path string) int {
	code, _ := n.getBody(path)
	return code
}

func (n *Node) getBody(path string) (int, []byte) {
	req, err := http.NewRequest(http.MethodGet, n.URL()+path, nil)
	if err != nil {
		return 0, nil
	}
	req.SetBasicAuth(Admin, n.c.AdminPassword)
	cl := http.Client{Timeout: 2 * time.Second}
	if n.c.pool != nil {
		cl.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: n.c.pool, MinVersion: tls.VersionTLS12}}
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// LeaderID asks the node which node leads ("" when it knows none or does not answer).
func (n *Node) LeaderID() string {
	code, body := n.getBody("/status")
	if code != http.StatusOK {
		return ""
	}
	var st struct {
		Store struct {
			Leader struct {
				NodeID string `json:"node_id"`
			} `json:"leader"`
		} `json:"store"`
	}
	if json.Unmarshal(body, &st) != nil {
		return ""
	}
	return st.Store.Leader.NodeID
}

// WaitLeader waits until every running node names the same running leader and that leader is
// ready, and returns it.
func (c *Cluster) WaitLeader(tb testing.TB, timeout time.Duration) *Node {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if l := c.leader(); l != nil {
			return l
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, n := range c.Nodes {
				fmt.Fprintf(&logs, "--- %s (running %v, leader %q)\n%s", n.ID, n.Running(), n.LeaderID(), n.Log())
			}
			tb.Fatalf("no rqlite leader within %s\n%s", timeout, logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

func (c *Cluster) leader() *Node {
	var id string
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		l := n.LeaderID()
		if l == "" || (id != "" && l != id) {
			return nil
		}
		id = l
	}
	for _, n := range c.Nodes {
		if n.ID == id && n.Running() && n.get("/readyz") == http.StatusOK {
			return n
		}
	}
	return nil
}

// Kill ends the node with SIGKILL and waits for the process to be gone.
func (n *Node) Kill(tb testing.TB) {
	tb.Helper()
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Restart starts a killed node again on the same addresses and data dir.
func (n *Node) Restart(tb testing.TB) {
	tb.Helper()
	if n.Running() {
		tb.Fatalf("restart %s: still running", n.ID)
	}
	n.start(tb)
}

// Stop kills every node; the test's cleanup calls it.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Kill(c.tb)
	}
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
