//go:build !memnode_lean

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// importBatch is how many records go to the node per request, each request one write
// transaction: big enough that a transaction's pages are written once for many records
// (1,000 wrote 8.5× the database's size to disk at 100k observations, 12.5× at 1M — issue
// 29; at 1M 5,000 wrote 4.7×, 20,000 4.1×: an index page a batch touches is written once
// per batch), small enough for a progress bar that moves (60 steps at 1M). importBatchBytes
// keeps a batch of large records inside the node's 64 MiB import body. The client reads and
// encodes the next batch while the node stores one (sendBatches).
const (
	importBatch      = 20000
	importBatchBytes = 48 << 20
)

func cmdImport(ctx context.Context, env *cliEnv, args []string) int {
	var agents []platform.Platform // those whose past sessions memnode imports
	for _, p := range registry.Builtin().All() {
		if p.History != nil {
			agents = append(agents, p)
		}
	}
	synopsis := "import FILE.jsonl (or - for stdin) | import --from-claude-mem PATH"
	for _, p := range agents {
		synopsis += " | import --from-" + p.Name + " [DIR]"
	}
	fs := newFlags(env, "import", synopsis+" [--since DATE] [--quiet]")
	from := fs.String("from-claude-mem", "", "import a claude-mem database (e.g. ~/.claude-mem/claude-mem.db)")
	fromAgent := make([]*bool, len(agents))
	for i, p := range agents {
		fromAgent[i] = fs.Bool("from-"+p.Name, false, fmt.Sprintf("import past %s sessions from DIR (default %s) as live hooks would have recorded them",
			p.Display, p.History.Dir("~", func(string) string { return "" })))
	}
	sinceFlag := fs.String("since", "", "with --from-AGENT: only sessions written since this date (ISO, e.g. 2026-11-01)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	var chosen []platform.Platform
	for i, p := range agents {
		if *fromAgent[i] {
			chosen = append(chosen, p)
		}
	}
	if len(chosen) > 1 {
		return fs.usageErr("give one of --from-%s and --from-%s, not both", chosen[0].Name, chosen[1].Name)
	}
	if len(chosen) == 1 {
		if *from != "" {
			return fs.usageErr("give --from-%s or --from-claude-mem, not both", chosen[0].Name)
		}
		var since int64
		if *sinceFlag != "" {
			if since, ok = apitype.ParseTimeFilter(*sinceFlag); !ok {
				return fs.usageErr("--since %q is not a date (e.g. 2026-11-01)", *sinceFlag)
			}
		}
		dir := ""
		if len(pos) == 1 {
			dir = pos[0]
		}
		return importAgentHistory(ctx, env, chosen[0], dir, since, *quiet)
	}
	if *sinceFlag != "" {
		return fs.usageErr("--since goes with --from-AGENT (%s)", strings.Join(importFlags(agents), ", "))
	}
	if *from == "" && len(pos) == 0 {
		return fs.usageErr("missing argument")
	}
	if *from != "" && len(pos) > 0 {
		return fs.usageErr("give FILE or --from-claude-mem, not both")
	}
	conn := newNodeConn(env)
	var total int
	bar := &progress{w: env.Stderr, quiet: *quiet, lines: !isTerminal(env.Stderr)}
	var each func(func(importer.Record) error) error
	if *from != "" {
		cm, err := importer.OpenClaudeMem(ctx, *from)
		if err != nil {
			return fail(env, "import: %v", err)
		}
		defer cm.Close()
		if total, err = cm.Count(ctx); err != nil {
			return fail(env, "import: %v", err)
		}
		each = func(fn func(importer.Record) error) error { return cm.Each(ctx, fn) }
	} else {
		var r io.Reader = env.Stdin
		if pos[0] != "-" {
			f, err := os.Open(pos[0])
			if err != nil {
				return fail(env, "import: %v", err)
			}
			defer f.Close()
			if total, err = countLines(f); err != nil {
				return fail(env, "import: %v", err)
			}
			r = f
		}
		each = func(fn func(importer.Record) error) error {
			rd := importer.NewReader(r)
			for {
				rec, err := rd.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := fn(rec); err != nil {
					return err
				}
			}
		}
	}
	bar.total = total
	var sum apitype.ImportResult
	err := sendBatches(ctx, each, importBatch, importBatchBytes, func(body []byte, n, headers int) error {
		// with retries once the node is started: each try reads the batch from its start.
		res, err := with(ctx, conn, func(c *client.Client) (apitype.ImportResult, error) {
			return c.Import(ctx, bytes.NewReader(body))
		})
		if err != nil {
			return err
		}
		sum.Add(res)
		bar.total -= headers // counted as lines; not records
		bar.add(n)
		return nil
	})
	bar.done()
	if err != nil {
		return fail(env, "import: %v (records already sent are stored; importing again is safe)", err)
	}
	fmt.Fprintf(env.Stdout, "imported %d sessions, %d prompts, %d observations, %d summaries, %d devices, %d tombstones, %d corrections; %d already present\n",
		sum.Sessions, sum.Prompts, sum.Observations, sum.Summaries, sum.Devices, sum.Tombstones, sum.Supersedes, sum.Skipped)
	return 0
}

// sendBatches encodes the records each gives in batches of up to batch records (fewer when
// the encoding reaches maxBytes) and sends them with send, one at a time and in order: a
// tombstone or correction refers to records of earlier batches. While one batch is in
// flight the next is read and encoded, so the node does not wait for the client between
// its transactions. The first error of send stops the import and is the one returned;
// batches handed over before the error of each are still sent. headers counts the header
// lines of the batch, which are not records.
func sendBatches(ctx context.Context, each func(func(importer.Record) error) error, batch, maxBytes int,
	send func(body []byte, n, headers int) error) error {
	type encoded struct {
		body       *bytes.Buffer
		n, headers int
	}
	queue := make(chan encoded, 1) // the batch encoded while the one before is in flight
	free := make(chan *bytes.Buffer, 3)
	stop := make(chan struct{}) // closed when a send failed
	sent := make(chan error, 1)
	go func() {
		var err error
		for b := range queue {
			if err == nil {
				if err = send(b.body.Bytes(), b.n, b.headers); err != nil {
					close(stop)
				}
			}
			b.body.Reset()
			free <- b.body // at most three buffers exist: encoding, queued, in flight
		}
		sent <- err
	}()
	cur := encoded{body: new(bytes.Buffer)}
	w := importer.NewWriter(cur.body)
	errStopped := errors.New("import stopped")
	flush := func() error {
		if cur.n == 0 {
			return nil
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("encode import: %w", err)
		}
		select {
		case queue <- cur:
		case <-stop:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		}
		cur = encoded{}
		select {
		case cur.body = <-free:
		default:
			cur.body = new(bytes.Buffer)
		}
		w = importer.NewWriter(cur.body)
		return nil
	}
	err := each(func(rec importer.Record) error {
		if rec.Kind == importer.KindHeader {
			cur.headers++
			return nil
		}
		if err := w.Write(rec); err != nil {
			return fmt.Errorf("encode import: %w", err)
		}
		cur.n++
		if cur.n == batch || cur.body.Len() >= maxBytes {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	close(queue)
	if serr := <-sent; serr != nil {
		return serr
	}
	return err
}

// importFlags are the --from-AGENT flags of ps.
func importFlags(ps []platform.Platform) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "--from-" + p.Name
	}
	return out
}

// countLines counts non-blank lines and rewinds f.
func countLines(f *os.File) (int, error) {
	n := 0
	u, err := importer.Uncompressed(f)
	if err != nil {
		return 0, err
	}
	br := bufio.NewReaderSize(u, 1<<16)
	blank := true
	for {
		chunk, err := br.ReadSlice('\n')
		if len(bytes.TrimSpace(chunk)) > 0 {
			blank = false
		}
		if err == nil || (errors.Is(err, io.EOF) && len(chunk) > 0) {
			if !blank {
				n++
			}
			blank = true
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, err
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return n, err
}

// progress draws a one-line progress bar on stderr for imports of more than one batch.
