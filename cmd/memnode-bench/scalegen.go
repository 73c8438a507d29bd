package main

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// scaleGenVersion names the generator's output: bump it whenever a change to this file
// changes a byte of what genDataset writes, so cached datasets (and the data dirs imported
// from them) of the old output are rebuilt instead of measured as if they were the new.
const scaleGenVersion = 1

// scaleProjects is the number of projects of a generated dataset. Their sizes follow
// 1/rank (Zipf, s=1): the largest holds 1/H(50) ≈ 22% of the observations (≈ 222k at 1M,
// the "200k-observation project"), the smallest ≈ 0.4%.
const scaleProjects = 50

// scaleEnd is when the generated history ends: fixed, so the output does not depend on the
// day it is generated, and in the past, so no stamp is ahead of a node's clock bound. The
// history spans the three years before it.
var scaleEnd = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

const scaleSpan = 3 * 365 * 24 * time.Hour

// scaleManifest is what a measurement needs to know about a generated dataset: the
// largest project and records of it to anchor, search and forget with.
type scaleManifest struct {
	Version      int      `json:"version"`
	Seed         uint64   `json:"seed"`
	Observations int      `json:"observations"`
	Records      int      `json:"records"` // every line but the header and devices
	Largest      string   `json:"largest_project"`
	LargestObs   int      `json:"largest_observations"`
	Anchor       string   `json:"anchor_id"`  // an observation in the middle of the largest project
	Forget       []string `json:"forget_ids"` // observations of the largest project to forget
	Query        string   `json:"query"`      // two words every project uses, in some records only
	// Import is the import into the cached data dir, measured when it was built.
	Import *scaleImport `json:"import,omitempty"`
}

// scaleImport is one `memnode import` of a dataset into an empty data dir.
type scaleImport struct {
	Records     int     `json:"records"`
	Seconds     float64 `json:"seconds"`
	WriteBytes  int64   `json:"write_bytes"` // the node's /proc/<pid>/io write_bytes from the import's start to the node's exit after it
	DBBytes     int64   `json:"db_bytes"`    // memnode.db (+ -wal) after a clean stop
	Load        string  `json:"load"`        // /proc/loadavg at its end
	MeasuredUTC string  `json:"measured_utc"`
}

// projectNames are 50 project names as a developer's ~/src holds them.
var projectNames = strings.Fields(`billing-api web-dashboard mobile-app infra-terraform data-pipeline
auth-service search-indexer docs-site cli-tools payments-gateway notification-service ml-training
admin-portal design-system etl-jobs chat-backend analytics-events feature-flags api-gateway
user-profile image-resizer video-transcoder recommendation-engine inventory-service order-service
shipping-tracker email-templates config-service log-shipper metrics-exporter k8s-manifests
helm-charts ci-scripts dotfiles blog-engine game-server crypto-wallet pdf-renderer scheduler
rate-limiter cache-proxy graphql-server websocket-hub file-uploader geo-service translation-service
audit-log backup-tool sso-bridge status-page`)

// langs give a project its file extensions and directory names.
var langs = []struct {
	ext   string
	dirs  []string
	tests string // how a test file is named: %s is the base name
	cmd   []string
}{
	{".go", strings.Fields("cmd internal/store internal/api internal/auth pkg/client pkg/config internal/worker migrations"), "%s_test.go",
		[]string{"go test ./...", "go test -race ./internal/...", "go vet ./...", "go build ./cmd/...", "golangci-lint run"}},
	{".ts", strings.Fields("src src/components src/routes src/lib src/hooks src/api test scripts"), "%s.test.ts",
		[]string{"npm test", "npx tsc --noEmit", "npm run lint", "npx vitest run", "pnpm build"}},
	{".py", strings.Fields("app app/models app/api app/services tests scripts notebooks"), "test_%s.py",
		[]string{"pytest -x", "python -m mypy app", "ruff check .", "pytest tests/ -k slow", "uv run pytest"}},
	{".rs", strings.Fields("src src/bin src/db src/net benches tests"), "%s_test.rs",
		[]string{"cargo test", "cargo clippy -- -D warnings", "cargo build --release", "cargo bench"}},
}

var fileStems = strings.Fields(`server handler router store cache queue worker config client session
token auth user account invoice payment order schema migrate index search parser lexer render
template middleware logger metrics health retry backoff limiter pool conn stream upload export
import sync scheduler cron job event webhook notifier mailer util errors types model view`)

var concepts = strings.Fields(`how-it-works problem-solution gotcha pattern trade-off what-changed why-it-exists`)

var prose = strings.Fields(`the a this that when because after before so and but with without which
it its is was were not only also then still every each one two first new old`)

// tools and their shares of tool calls (percent), as a Claude Code session spreads them.
var tools = []struct {
	name  string
	share int
}{{"Read", 30}, {"Edit", 18}, {"Bash", 20}, {"Grep", 10}, {"Write", 5}, {"Glob", 5}, {"WebFetch", 4},
	{"WebSearch", 2}, {"Task", 3}, {"TodoWrite", 3}}

// scaleGen writes one dataset. It keeps no per-record state beyond the current session,
// so 1M observations stream out in constant memory.
type scaleGen struct {
	r     *rand.Rand
	w     *importer.Writer
	words *words
	man   scaleManifest
	// largestSeen counts the largest project's observations written so far.
	largestSeen int
}

// projectSizes splits n observations over scaleProjects projects by 1/rank.
func projectSizes(n int) []int {
	var h float64
	for i := range scaleProjects {
		h += 1 / float64(i+1)
	}
	sizes := make([]int, scaleProjects)
	sum := 0
	for i := range sizes {
		sizes[i] = int(float64(n) / float64(i+1) / h)
		sum += sizes[i]
	}
	sizes[0] += n - sum
	return sizes
}

// genDataset writes a dataset of n observations (plus their sessions, prompts and
// summaries) in the export format to w, the same bytes for the same n and seed. progress,
// if set, is called with the observations written so far every 1% or so.
func genDataset(w *importer.Writer, n int, seed uint64, progress func(done int)) (scaleManifest, error) {
	g := &scaleGen{r: rand.New(rand.NewPCG(seed, 0x6d656d6e6f6465)), w: w, words: newWords(int64(seed)),
		man: scaleManifest{Version: scaleGenVersion, Seed: seed, Observations: n, Query: "checkpoint wal"}}
	if err := w.Write(importer.Record{Kind: importer.KindHeader, Header: &importer.Header{Format: importer.Format,
		Version: importer.FormatVersion, ExportedAt: scaleEnd.UnixMilli(), Source: fmt.Sprintf("memnode-bench scale v%d", scaleGenVersion)}}); err != nil {
		return g.man, err
	}
	origins := []memory.Device{{Origin: "bench-laptop-7f3a", Name: "laptop"}, {Origin: "bench-desktop-21c9", Name: "desktop"},
		{Origin: "bench-server-90be", Name: "build-server"}}
	for i := range origins {
		if err := w.Write(importer.Record{Kind: importer.KindDevice, Device: &origins[i]}); err != nil {
			return g.man, err
		}
	}
	sizes := projectSizes(n)
	g.man.Largest, g.man.LargestObs = projectNames[0], sizes[0]
	done, step := 0, max(1, n/100)
	for p, size := range sizes {
		if err := g.project(p, size, origins, func(k int) {
			done += k
			if progress != nil && done/step != (done-k)/step {
				progress(done)
			}
		}); err != nil {
			return g.man, err
		}
	}
	return g.man, nil
}

// project writes one project's sessions. A project is active over a window of the three
// years (the largest ones all of it), its sessions spread evenly over the window.
func (g *scaleGen) project(p, size int, origins []memory.Device, done func(int)) error {
	name := projectNames[p]
	lang := langs[p%len(langs)]
	files := make([]string, 40+g.r.IntN(300))
	for i := range files {
		d := lang.dirs[g.r.IntN(len(lang.dirs))]
		stem := fileStems[g.r.IntN(len(fileStems))]
		if g.r.IntN(5) == 0 {
			stem = fmt.Sprintf(lang.tests, stem)
			files[i] = path.Join(d, stem)
			if !strings.HasSuffix(stem, lang.ext) {
				files[i] += lang.ext
			}
			continue
		}
		files[i] = path.Join(d, stem+lang.ext)
	}
	windowFrac := 1.0
	if p >= 5 {
		windowFrac = 0.15 + 0.85*g.r.Float64()
	}
	window := time.Duration(float64(scaleSpan) * windowFrac)
	start := scaleEnd.Add(-scaleSpan).Add(time.Duration(g.r.Int64N(int64(scaleSpan - window + 1))))
	origin := origins[g.r.IntN(2)] // one laptop or desktop mostly; the server now and then
	left := size
	nSessions := max(1, size/25)
	for s := 0; left > 0; s++ {
		k := min(left, 5+g.r.IntN(40)) // 5–44 observations, 24.5 on average
		at := start.Add(time.Duration(float64(window) * min(1, float64(s)/float64(nSessions))))
		at = at.Add(time.Duration(g.r.Int64N(int64(8 * time.Hour))))
		if last := scaleEnd.Add(-2 * time.Hour); at.After(last) { // a session lasts at most 44 × 2 min
			at = last.Add(-time.Duration(g.r.IntN(1000)) * time.Minute)
		}
		o := origin
		if g.r.IntN(10) == 0 {
			o = origins[2]
		}
		if err := g.session(name, s, k, at, o.Origin, files, lang.cmd, size); err != nil {
			return err
		}
		left -= k
		done(k)
	}
	return nil
}

// session writes a session, its prompts, k observations and its summary.
func (g *scaleGen) session(project string, s, k int, at time.Time, origin string, files, cmds []string, projectSize int) error {
	t := at.UnixMilli()
	var ctr uint64
	stamp := func(ms int64) uint64 { ctr++; return uint64(ms)<<store.HLCLogicalBits | ctr&0xffff }
	sid := fmt.Sprintf("%s-%x-%05d", project, uint32(g.r.Uint64()), s)
	platform := "claude-code"
	if g.r.IntN(6) == 0 {
		platform = []string{"codex", "gemini-cli", "opencode"}[g.r.IntN(3)]
	}
	end := t + int64(k)*int64(20_000+g.r.IntN(100_000))
	sess := &memory.Session{ID: sid, Project: project, Platform: platform, StartedAt: t, EndedAt: end,
		Status: "completed", Origin: origin, HLC: stamp(end)}
	if err := g.w.Write(importer.Record{Kind: importer.KindSession, Session: sess}); err != nil {
		return err
	}
	prompts := 1 + k/8
	topic := g.words.n(2)
	for i := range prompts {
		ms := t + int64(i)*(end-t)/int64(prompts)
		h := stamp(ms)
		pr := &memory.Prompt{ID: store.NewID(h, origin), SessionID: sid, Project: project, PromptNumber: i + 1,
			Text: g.promptText(topic, files), CreatedAt: ms, Origin: origin, HLC: h}
		if err := g.w.Write(importer.Record{Kind: importer.KindPrompt, Prompt: pr}); err != nil {
			return err
		}
	}
	for i := range k {
		ms := t + 1 + int64(i)*(end-t)/int64(k+1)
		h := stamp(ms)
		o := g.observation(project, sid, i, k, prompts, topic, files, cmds)
		o.ID, o.CreatedAt, o.Origin, o.HLC = store.NewID(h, origin), ms, origin, h
		o.ContentHash = o.HashContent()
		if project == g.man.Largest {
			g.pick(o.ID, projectSize)
		}
		if err := g.w.Write(importer.Record{Kind: importer.KindObservation, Observation: o}); err != nil {
			return err
		}
	}
	g.man.Records += 2 + prompts + k
	h := stamp(end + 1)
	sum := &memory.Summary{ID: store.NewID(h, origin), SessionID: sid, Project: project,
		Request:      g.promptText(topic, files),
		Investigated: "Looked at " + strings.Join(g.some(files, 3), ", ") + "; " + g.sentence(8, 20),
		Learned:      g.sentence(15, 45), Completed: g.sentence(10, 35), NextSteps: g.sentence(6, 20),
		DiscoveryTokens: 500 + g.r.IntN(8000), Model: "claude-sonnet-4-5", CreatedAt: end + 1, Origin: origin, HLC: h}
	if g.r.IntN(4) == 0 {
		sum.Notes = g.sentence(5, 15)
	}
	return g.w.Write(importer.Record{Kind: importer.KindSummary, Summary: sum})
}

// pick remembers the largest project's observations the measurement anchors on and forgets:
// the one at its middle, and ten spread over it.
func (g *scaleGen) pick(id string, size int) {
	i := g.largestSeen
	g.largestSeen++
	switch {
	case i == size/2:
		g.man.Anchor = id
	case (i+size/20)%max(1, size/10) == 0 && len(g.man.Forget) < 10:
		g.man.Forget = append(g.man.Forget, id)
	}
}

func (g *scaleGen) observation(project, sid string, i, k, prompts int, topic string, files, cmds []string) *memory.Observation {
	roll := g.r.IntN(100)
	tool := tools[0].name
	for _, t := range tools {
		if roll < t.share {
			tool = t.name
			break
		}
		roll -= t.share
	}
	f := files[g.r.IntN(len(files))]
	base := path.Base(f)
	o := &memory.Observation{SessionID: sid, Project: project, ToolName: tool, PromptNumber: 1 + i*prompts/k,
		DiscoveryTokens: 150 + g.r.IntN(4000), Model: "claude-sonnet-4-5",
		Concepts: []string{concepts[g.r.IntN(len(concepts))]}}
	if g.r.IntN(3) == 0 {
		o.Concepts = append(o.Concepts, concepts[g.r.IntN(len(concepts))])
	}
	w := g.words
	switch tool {
	case "Read", "Grep", "Glob":
		o.Type = memory.TypeDiscovery
		o.FilesRead = g.some(files, 1+g.r.IntN(4))
		o.Title = fmt.Sprintf("%s %s in %s", []string{"How", "Where", "Why"}[g.r.IntN(3)], w.n(2), base)
		o.Subtitle = fmt.Sprintf("%s reads %s before %s", base, w.pick(), w.pick())
	case "Edit", "Write":
		o.Type = []string{memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor, memory.TypeChange}[g.r.IntN(4)]
		o.FilesModified = g.some(files, 1+g.r.IntN(3))
		o.FilesRead = g.some(files, g.r.IntN(2))
		o.Title = fmt.Sprintf("%s %s %s in %s", []string{"Fix", "Add", "Move", "Rename", "Split"}[g.r.IntN(5)], w.pick(), w.pick(), base)
		o.Subtitle = fmt.Sprintf("%s: %s now %s", f, w.pick(), w.n(3))
	case "Bash":
		o.Type = []string{memory.TypeChange, memory.TypeBugfix, memory.TypeDiscovery}[g.r.IntN(3)]
		c := cmds[g.r.IntN(len(cmds))]
		o.Title = fmt.Sprintf("`%s` %s after %s", c, []string{"passes", "fails", "is slow", "flakes"}[g.r.IntN(4)], w.pick())
		o.Subtitle = fmt.Sprintf("%d tests, %s", 5+g.r.IntN(900), w.n(3))
	case "WebFetch", "WebSearch":
		o.Type = memory.TypeDiscovery
		o.Title = fmt.Sprintf("Docs: %s %s behaviour", w.pick(), w.pick())
		o.Subtitle = fmt.Sprintf("https://docs.example.dev/%s/%s", w.pick(), w.pick())
	default:
		o.Type = []string{memory.TypeDecision, memory.TypeDiscovery, memory.TypeFeature}[g.r.IntN(3)]
		o.Title = fmt.Sprintf("Plan: %s for %s", w.n(3), topic)
	}
	if g.r.IntN(25) == 0 {
		o.Type = memory.TypeDecision
	}
	o.Narrative = g.narrative(base, topic)
	for range 1 + g.r.IntN(5) {
		o.Facts = append(o.Facts, fmt.Sprintf("%s: %s %s", g.some(files, 1)[0], w.n(2), g.sentence(4, 12)))
	}
	return o
}

// narrative is 1–5 sentences (≈ 80–700 characters), the occasional long one included.
func (g *scaleGen) narrative(base, topic string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s: %s.", strings.ToUpper(topic[:1])+topic[1:], base, g.sentence(6, 20))
	for range g.r.IntN(5) {
		b.WriteString(" ")
		b.WriteString(g.sentence(8, 25))
		b.WriteString(".")
	}
	return b.String()
}

// sentence is lo..hi words of the vocabulary with prose words between.
func (g *scaleGen) sentence(lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	s := make([]string, n)
	for i := range s {
		if g.r.IntN(3) == 0 {
			s[i] = prose[g.r.IntN(len(prose))]
		} else {
			s[i] = g.words.pick()
		}
	}
	return strings.Join(s, " ")
}

func (g *scaleGen) promptText(topic string, files []string) string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("why does %s fail with %s", g.some(files, 1)[0], g.sentence(3, 10))
	case 1:
		return fmt.Sprintf("add %s to %s and make the tests pass", topic, g.some(files, 1)[0])
	case 2:
		return fmt.Sprintf("refactor the %s: %s", topic, g.sentence(10, 40))
	}
	return g.sentence(5, 30)
}

// some picks k distinct-ish files.
func (g *scaleGen) some(files []string, k int) []string {
	if k == 0 {
		return nil
	}
	out := make([]string, k)
	for i := range out {
		out[i] = files[g.r.IntN(len(files))]
	}
	return out
}
