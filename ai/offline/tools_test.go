package offline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

const cwd = "/home/dev/demo-app"

// js marshals v for a tool payload.
func js(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

type m = map[string]any

type obsWant struct {
	skip          bool
	typ           string
	title         string   // exact, when set
	titleHas      []string // substrings of the title
	factsHave     []string // substrings that some fact must contain, each
	narrativeHas  []string
	read          []string // exact files_read members
	modified      []string // exact files_modified members
	concepts      []string // members of concepts
	subtitleHas   string
	factsLackText string // no fact may contain this
}

func checkObs(t *testing.T, calls []ai.ToolCall, w obsWant) {
	t.Helper()
	obs := observeAll(t, calls)
	if w.skip {
		if len(obs) != 0 {
			t.Fatalf("want the call skipped, got %s", dump(t, obs))
		}
		return
	}
	if len(obs) != 1 {
		t.Fatalf("got %d observations, want 1", len(obs))
	}
	o := obs[0]
	if testing.Verbose() {
		t.Log(dump(t, o))
	}
	if w.typ != "" && o.Type != w.typ {
		t.Errorf("type = %q, want %q", o.Type, w.typ)
	}
	if w.title != "" && o.Title != w.title {
		t.Errorf("title = %q, want %q", o.Title, w.title)
	}
	mustContain(t, "title", o.Title, w.titleHas...)
	mustContain(t, "narrative", o.Narrative, w.narrativeHas...)
	mustContain(t, "subtitle", o.Subtitle, w.subtitleHas)
	facts := strings.Join(o.Facts, "\n")
	mustContain(t, "facts", facts, w.factsHave...)
	if w.factsLackText != "" && strings.Contains(facts, w.factsLackText) {
		t.Errorf("facts should not contain %q:\n%s", w.factsLackText, facts)
	}
	for _, f := range w.read {
		if !containsStr(o.FilesRead, f) {
			t.Errorf("files_read %v lacks %q", o.FilesRead, f)
		}
	}
	for _, f := range w.modified {
		if !containsStr(o.FilesModified, f) {
			t.Errorf("files_modified %v lacks %q", o.FilesModified, f)
		}
	}
	for _, c := range w.concepts {
		if !containsStr(o.Concepts, c) {
			t.Errorf("concepts %v lack %q", o.Concepts, c)
		}
	}
}

func call(tb testing.TB, tool, prompt string, in, resp any) ai.ToolCall {
	tb.Helper()
	c := ai.ToolCall{SessionID: "s1", Project: "demo-app", Cwd: cwd, ToolName: tool, Prompt: prompt}
	switch v := in.(type) {
	case nil:
	case json.RawMessage:
		c.ToolInput = v
	default:
		c.ToolInput = js(tb, v)
	}
	switch v := resp.(type) {
	case nil:
	case json.RawMessage:
		c.ToolResponse = v
	default:
		c.ToolResponse = js(tb, v)
	}
	return c
}

const goServer = `package server

import (
	"context"
	"net/http"
)

// Server serves the API.
type Server struct {
	srv *http.Server
}

// New returns a Server.
func New(addr string) *Server { return &Server{} }

// Start listens. TODO: honour ctx cancellation during startup
func (s *Server) Start(ctx context.Context) error {
	return s.srv.ListenAndServe()
}

func handleLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(405)
	}
}
`

const tsModule = `import { Router } from "express";

export interface Session { user: string }
export const router = Router();
export async function refreshToken(token: string): Promise<string> {
  return token;
}
export default class TokenStore {
  get(id: string) { return id }
}
const internal = 1;
`

const pyModule = `import jwt

class TokenError(Exception):
    pass

def decode(token):
    return jwt.decode(token)

async def refresh(token):
    return token
`

func TestOfflineRead(t *testing.T) {
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"go file", call(t, "Read", "", m{"file_path": cwd + "/internal/server/server.go"},
			m{"type": "text", "file": m{"filePath": cwd + "/internal/server/server.go", "content": goServer, "numLines": 26, "startLine": 1, "totalLines": 26}}),
			obsWant{typ: memory.TypeDiscovery, title: "Read internal/server/server.go",
				subtitleHas: "26 lines of Go", factsHave: []string{"defines: Server, New, Server.Start, handleLogin", "TODO: honour ctx cancellation"},
				read: []string{"internal/server/server.go"}, concepts: []string{"auth"}}},
		{"partial read", call(t, "Read", "", m{"file_path": cwd + "/internal/server/server.go", "offset": 100, "limit": 50},
			m{"type": "text", "file": m{"filePath": cwd + "/internal/server/server.go", "content": "x := 1\n", "numLines": 50, "startLine": 100, "totalLines": 400}}),
			obsWant{title: "Read internal/server/server.go (lines 100-149)", subtitleHas: "lines 100-149 of 400"}},
		{"typescript", call(t, "Read", "", m{"file_path": cwd + "/web/src/auth/tokens.ts"},
			m{"type": "text", "file": m{"filePath": cwd + "/web/src/auth/tokens.ts", "content": tsModule}}),
			obsWant{factsHave: []string{"defines: Session, router, refreshToken, TokenStore"}, factsLackText: "internal", concepts: []string{"auth"}}},
		{"python", call(t, "Read", "", m{"file_path": cwd + "/app/tokens.py"},
			m{"type": "text", "file": m{"filePath": cwd + "/app/tokens.py", "content": pyModule}}),
			obsWant{factsHave: []string{"defines: TokenError, decode, refresh"}, subtitleHas: "Python"}},
		{"markdown", call(t, "Read", "", m{"file_path": cwd + "/README.md"},
			m{"type": "text", "file": m{"filePath": cwd + "/README.md", "content": "# Demo app\n\n## Install\n\nrun it\n\n## Auth flow\n"}}),
			obsWant{factsHave: []string{"sections: Demo app, Install, Auth flow"}}},
		{"outside cwd stays absolute", call(t, "Read", "", m{"file_path": "/etc/hosts"}, "127.0.0.1 localhost\n"),
			obsWant{title: "Read /etc/hosts", read: []string{"/etc/hosts"}, subtitleHas: "1 line"}},
		{"image", call(t, "Read", "", m{"file_path": cwd + "/docs/arch.png"}, m{"type": "image", "file": m{"base64": "iVBORw0KGgo=", "type": "image/png"}}),
			obsWant{title: "Read image docs/arch.png"}},
		{"numbered lines are tolerated", call(t, "Read", "", m{"file_path": cwd + "/a.go"}, "     1\tpackage a\n     2\t\n     3\tfunc A() {}\n"),
			obsWant{title: "Read a.go", subtitleHas: "3 lines", factsHave: []string{"defines: A"}}},
		{"arrow numbered lines", call(t, "Read", "", m{"file_path": cwd + "/b.py"}, "     1→import os\n     2→def b():\n     3→    pass\n"),
			obsWant{factsHave: []string{"defines: b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}

func TestOfflineEdit(t *testing.T) {
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"feature adds a function", call(t, "Edit", "Add rate limiting to the login handler",
			m{"file_path": cwd + "/internal/server/server.go", "old_string": "func handleLogin(w http.ResponseWriter, r *http.Request) {",
				"new_string": "func rateLimit(next http.Handler) http.Handler {\n\treturn limiter.Wrap(next)\n}\n\nfunc handleLogin(w http.ResponseWriter, r *http.Request) {"},
			m{"filePath": cwd + "/internal/server/server.go", "originalFile": goServer, "structuredPatch": []m{{"oldStart": 22, "oldLines": 1, "newStart": 22, "newLines": 5}}}),
			obsWant{typ: memory.TypeFeature, title: "Edit internal/server/server.go: add rateLimit", factsHave: []string{"adds rateLimit"},
				modified: []string{"internal/server/server.go"}, subtitleHas: "at line 22 in handleLogin", narrativeHas: []string{`Request: "Add rate limiting`}}},
		{"enclosing function from the original file", call(t, "Edit", "",
			m{"file_path": cwd + "/internal/server/server.go", "old_string": "\t\tw.WriteHeader(405)", "new_string": "\t\thttp.Error(w, \"method not allowed\", http.StatusMethodNotAllowed)\n\t\treturn"},
			m{"filePath": cwd + "/internal/server/server.go", "originalFile": goServer}),
			obsWant{typ: memory.TypeChange, subtitleHas: "in handleLogin", factsHave: []string{`responds "method not allowed"`}}},
		{"rename is a refactor", call(t, "Edit", "Rename getUser to fetchUser everywhere",
			m{"file_path": cwd + "/web/src/api.ts", "old_string": "const u = await getUser(id);", "new_string": "const u = await fetchUser(id);", "replace_all": true}, nil),
			obsWant{typ: memory.TypeRefactor, title: "Edit web/src/api.ts: rename getUser → fetchUser", factsHave: []string{"replaces every occurrence", "`const u = await getUser(id);` → `const u = await fetchUser(id);`"}}},
		{"constant change", call(t, "Edit", "",
			m{"file_path": cwd + "/config/server.yaml", "old_string": "timeout: 30", "new_string": "timeout: 60"}, nil),
			obsWant{typ: memory.TypeChange, title: "Edit config/server.yaml: change 30 → 60", concepts: []string{"config"}}},
		{"python raise under a bug prompt", call(t, "Edit", "decode() crashes on empty tokens",
			m{"file_path": cwd + "/app/tokens.py", "old_string": "def decode(token):\n    return jwt.decode(token)",
				"new_string": "def decode(token):\n    if not token:\n        raise TokenError(\"empty token\")\n    return jwt.decode(token)"}, nil),
			obsWant{typ: memory.TypeBugfix, titleHas: []string{"app/tokens.py: check not token"}, factsHave: []string{`raises TokenError "empty token"`, "adds check `if not token`"}}},
		{"chinese bug prompt", call(t, "Edit", "登录接口在 JWT 过期时返回 500，请修复",
			m{"file_path": cwd + "/internal/auth/middleware.go", "old_string": "claims, _ := parse(tok)", "new_string": "claims, err := parse(tok)\nif err != nil {\n\treturn err\n}"}, nil),
			obsWant{typ: memory.TypeBugfix, narrativeHas: []string{"Fix for: \"登录接口在 JWT 过期时返回 500，请修复\""}}},
		{"docs edit under a bug prompt is a change", call(t, "Edit", "fix the typo bug in the README",
			m{"file_path": cwd + "/README.md", "old_string": "Instal the app", "new_string": "Install the app"}, nil),
			obsWant{typ: memory.TypeChange, modified: []string{"README.md"}}},
		{"fix comment makes a bugfix without a prompt", call(t, "Edit", "",
			m{"file_path": cwd + "/pkg/q/queue.go", "old_string": "q.items = q.items[1:]", "new_string": "// fix: avoid holding a reference to the popped item\nq.items[0] = nil\nq.items = q.items[1:]"}, nil),
			obsWant{typ: memory.TypeBugfix, title: "Edit pkg/q/queue.go: add `q.items[0] = nil`",
				factsHave: []string{"adds `q.items[0] = nil`", "comment: fix: avoid holding a reference to the popped item"}}},
		{"comment-only edit", call(t, "Edit", "",
			m{"file_path": cwd + "/pkg/q/queue.go", "old_string": "q.items = q.items[1:]", "new_string": "// the head is dropped, not copied\nq.items = q.items[1:]"}, nil),
			obsWant{typ: memory.TypeChange, title: "Edit pkg/q/queue.go: add comment `the head is dropped, not copied`",
				subtitleHas: "+1 −0", factsHave: []string{"comment: the head is dropped, not copied"}}},
		{"every added comment line is counted", call(t, "Edit", "",
			m{"file_path": cwd + "/pkg/q/queue.go", "old_string": "x := 1", "new_string": "// one\n// two\n// three\n// four\n// five\nx := 1\ny := 2"}, nil),
			obsWant{subtitleHas: "+6 −0", factsHave: []string{"comment: one"}}},
		{"multiedit", call(t, "MultiEdit", "",
			m{"file_path": cwd + "/internal/auth/refresh.go", "edits": []m{
				{"old_string": "claims, _ := parse(tok)", "new_string": "claims, err := parse(tok)\nif err != nil {\n\treturn nil, err\n}"},
				{"old_string": "func Refresh(", "new_string": "// Refresh issues a new token.\nfunc Refresh("},
			}}, nil),
			obsWant{typ: memory.TypeBugfix, factsHave: []string{"2 edits", "adds check `if err != nil`"}, modified: []string{"internal/auth/refresh.go"}}},
		{"patch only", call(t, "Edit", "", m{"file_path": cwd + "/x.go"},
			m{"structuredPatch": []m{{"newStart": 3, "lines": []string{"-a := 1", "+a := compute()"}}}}),
			obsWant{title: "Edit x.go: `a := 1` → `a := compute()`", factsHave: []string{"`a := 1` → `a := compute()`"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}

func TestOfflineWrite(t *testing.T) {
	testFile := "package auth\n\nimport \"testing\"\n\nfunc TestExpiredTokenReturns401(t *testing.T) {\n\tt.Fatal(\"todo\")\n}\n"
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"create under a bug prompt", call(t, "Write", fixturePrompt,
			m{"file_path": cwd + "/internal/auth/middleware_test.go", "content": testFile},
			m{"type": "create", "filePath": cwd + "/internal/auth/middleware_test.go", "content": testFile, "structuredPatch": []m{}}),
			obsWant{typ: memory.TypeBugfix, title: "Create internal/auth/middleware_test.go: TestExpiredTokenReturns401",
				factsHave: []string{"new file, 7 lines"}, modified: []string{"internal/auth/middleware_test.go"}, concepts: []string{"testing"}}},
		{"create without prompt is a feature", call(t, "Write", "",
			m{"file_path": cwd + "/internal/auth/refresh.go", "content": "package auth\n\nfunc Refresh() {}\n"}, m{"type": "create"}),
			obsWant{typ: memory.TypeFeature, titleHas: []string{"Create internal/auth/refresh.go: Refresh"}}},
		{"update with original", call(t, "Write", "",
			m{"file_path": cwd + "/main.go", "content": "package main\n\nfunc main() {\n\trun()\n}\n\nfunc run() {}\n"},
			m{"type": "update", "originalFile": "package main\n\nfunc main() {\n}\n"}),
			obsWant{typ: memory.TypeFeature, title: "Rewrite main.go: add run", factsHave: []string{"now 7 lines"}}},
		{"new docs file", call(t, "Write", "", m{"file_path": cwd + "/docs/auth.md", "content": "# Auth\n\n## Tokens\n"}, m{"type": "create"}),
			obsWant{typ: memory.TypeFeature, factsHave: []string{"sections: Auth, Tokens"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}

func bashCall(tb testing.TB, prompt, cmd, desc string, resp any) ai.ToolCall {
	tb.Helper()
	in := m{"command": cmd}
	if desc != "" {
		in["description"] = desc
	}
	return call(tb, "Bash", prompt, in, resp)
}

func out(stdout, stderr string) m {
	return m{"stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false}
}

func TestOfflineBash(t *testing.T) {
	goFail := "--- FAIL: TestExpiredTokenReturns401 (0.00s)\n    middleware_test.go:42: status = 500, want 401\nFAIL\nFAIL\tdemo-app/internal/auth\t0.311s\nok  \tdemo-app/internal/user\t0.101s\nFAIL\n"
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"go test fails", bashCall(t, fixturePrompt, "go test ./...", "Run all tests", out(goFail, "")),
			obsWant{typ: memory.TypeDiscovery, title: "Tests fail: go test ./...", subtitleHas: "1 test failed",
				factsHave: []string{"--- FAIL: TestExpiredTokenReturns401", "middleware_test.go:42: status = 500, want 401", "FAIL demo-app/internal/auth"},
				concepts:  []string{"testing"}, narrativeHas: []string{"1 test failed"}}},
		{"pytest passes", bashCall(t, "", "cd backend && python -m pytest -q tests/", "", out("........\n8 passed in 0.53s\n", "")),
			obsWant{title: "Tests pass: python -m pytest -q tests/", factsHave: []string{"8 passed in 0.53s"}}},
		{"jest fails", bashCall(t, "", "npm test", "", out("", "FAIL src/auth.test.ts\n  ● refresh › rejects expired tokens\nTests:       1 failed, 4 passed, 5 total\n")),
			obsWant{title: "Tests fail: npm test", factsHave: []string{"● refresh › rejects expired tokens", "result: 1 failed, 4 succeeded"}, concepts: []string{"testing"}}},
		{"cargo test passes", bashCall(t, "", "cargo test", "", out("running 3 tests\ntest result: ok. 3 passed; 0 failed\n", "")),
			obsWant{title: "Tests pass: cargo test"}},
		{"string error response", call(t, "Bash", "", m{"command": "go test ./internal/auth/"}, "Error: Exit code 1\n--- FAIL: TestX (0.00s)\nFAIL"),
			obsWant{title: "Tests fail: go test ./internal/auth/", factsHave: []string{"exit 1", "--- FAIL: TestX"}}},
		{"build fails", bashCall(t, "", "go build ./...", "", out("", "# demo-app/internal/auth\ninternal/auth/middleware.go:14:6: undefined: jwt\n")),
			obsWant{title: "Build/check fails: go build ./...", factsHave: []string{"internal/auth/middleware.go:14:6: undefined: jwt"}}},
		{"build ok with no output", bashCall(t, "", "go vet ./internal/...", "", out("", "")),
			obsWant{title: "Build/check ok: go vet ./internal/..."}},
		{"vet of everything is a check, not a test run", bashCall(t, "", "go vet ./...", "", out("", "")),
			obsWant{title: "Build/check ok: go vet ./..."}},
		{"empty output of a test run is not a pass", bashCall(t, "", "python -m pytest -q", "", out("", "")),
			obsWant{title: "Test result unknown: python -m pytest -q", subtitleHas: "result not recognised"}},
		{"git commit heredoc", bashCall(t, "", "git add -A && git commit -m \"$(cat <<'EOF'\nfix(auth): return 401 for expired tokens\n\nThe middleware ignored parse errors.\nEOF\n)\"", "Commit the fix",
			out("[main 1a2b3c4] fix(auth): return 401 for expired tokens\n 2 files changed, 30 insertions(+)\n", "")),
			obsWant{typ: memory.TypeChange, title: "Commit: fix(auth): return 401 for expired tokens", concepts: []string{"git"}}},
		{"git status", bashCall(t, "", "git status --short", "", out(" M internal/auth/middleware.go\n?? internal/auth/middleware_test.go\n", "")),
			obsWant{subtitleHas: "2 changed files", factsHave: []string{"M internal/auth/middleware.go"}}},
		{"curl with description", bashCall(t, "", "curl -s localhost:8080/login", "Try the endpoint", out(`{"error":"token expired"}`, "")),
			obsWant{title: `Try the endpoint → {"error":"token expired"}`, subtitleHas: "curl -s localhost:8080/login", factsHave: []string{`output: {"error":"token expired"}`}, factsLackText: "$ curl"}},
		{"npm install is a change", bashCall(t, "", "npm install jsonwebtoken", "", out("added 1 package in 2s\n", "")),
			obsWant{typ: memory.TypeChange, concepts: []string{"dependencies"}}},
		{"cat reads a file", bashCall(t, "", "cat internal/auth/jwt.go", "", out("package auth\n", "")),
			obsWant{read: []string{"internal/auth/jwt.go"}}},
		{"heredoc write", bashCall(t, "", "cat > internal/auth/claims.go <<'EOF'\npackage auth\ntype Claims struct{}\nEOF", "", out("", "")),
			obsWant{typ: memory.TypeChange, title: "Write internal/auth/claims.go from the shell", modified: []string{"internal/auth/claims.go"}}},
		{"sed in place", bashCall(t, "", "sed -i 's/ErrExpired/ErrTokenExpired/g' internal/auth/middleware.go", "", out("", "")),
			obsWant{typ: memory.TypeChange, modified: []string{"internal/auth/middleware.go"}}},
		{"files of every command of a chain", bashCall(t, "", "cat a.go && rm b.go;mv c.go d.go || touch e.go | wc -l", "", out("", "")),
			obsWant{read: []string{"a.go"}, modified: []string{"b.go", "c.go", "d.go", "e.go"}}},
		{"rm modifies", bashCall(t, "", "rm -f internal/auth/old.go", "", out("", "")),
			obsWant{typ: memory.TypeChange, modified: []string{"internal/auth/old.go"}, factsLackText: "no output"}},
		{"failed command", call(t, "Bash", "", m{"command": "./scripts/migrate.sh"}, m{"stdout": "", "stderr": "psql: error: connection refused\n", "exit_code": 2}),
			obsWant{factsHave: []string{"exit 2", "psql: error: connection refused"}, narrativeHas: []string{"It failed: psql: error: connection refused"}}},
		{"ls with output is kept", bashCall(t, "", "ls internal/auth", "", out("middleware.go\nrefresh.go\n", "")),
			obsWant{factsHave: []string{"2 entries: middleware.go, refresh.go"}}},
		{"long output keeps head and tail", bashCall(t, "", "./gen.sh", "", out(strings.Repeat("line\n", 50)+"done: 50 files\n", "")),
			obsWant{factsHave: []string{"last: done: 50 files"}}},
		{"pwd is skipped", bashCall(t, "", "pwd", "", out(cwd+"\n", "")), obsWant{skip: true}},
		{"empty ls is skipped", bashCall(t, "", "ls build/", "", out("", "")), obsWant{skip: true}},
		{"cd chain is skipped", bashCall(t, "", "cd internal && cd auth", "", out("", "")), obsWant{skip: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}

func TestOfflineSearchAndOtherTools(t *testing.T) {
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"grep files", call(t, "Grep", "", m{"pattern": "ErrTokenExpired", "path": cwd, "glob": "*.go"},
			m{"mode": "files_with_matches", "filenames": []string{cwd + "/internal/auth/middleware.go", cwd + "/vendor/jwt/errors.go"}, "numFiles": 2}),
			obsWant{typ: memory.TypeDiscovery, title: `Search "ErrTokenExpired": 2 matching files`,
				factsHave: []string{"pattern `ErrTokenExpired` (glob *.go)", "internal/auth/middleware.go, vendor/jwt/errors.go"},
				read:      []string{"vendor/jwt/errors.go"}}},
		{"grep content", call(t, "Grep", "", m{"pattern": "parse\\(", "path": cwd + "/internal", "output_mode": "content", "-n": true},
			m{"mode": "content", "content": cwd + "/internal/auth/middleware.go:12:\tclaims, _ := parse(tok)\n" + cwd + "/internal/auth/refresh.go:20:\tc, _ := parse(t)", "numLines": 2}),
			obsWant{title: `Search "parse\(" in internal: 2 matching lines`, factsHave: []string{"internal/auth/middleware.go:12: claims, _ := parse(tok)"}}},
		{"grep nothing", call(t, "Grep", "", m{"pattern": "TODO"}, m{"mode": "files_with_matches", "filenames": []string{}, "numFiles": 0}),
			obsWant{factsHave: []string{"no matches"}, narrativeHas: []string{"nothing matched"}}},
		{"glob", call(t, "Glob", "", m{"pattern": "**/*_test.go"}, m{"filenames": []string{cwd + "/a_test.go", cwd + "/b/b_test.go"}, "numFiles": 2, "truncated": false}),
			obsWant{title: `Find files "**/*_test.go": 2 files`, factsHave: []string{"a_test.go, b/b_test.go"}}},
		{"web fetch", call(t, "WebFetch", "", m{"url": "https://pkg.go.dev/github.com/golang-jwt/jwt/v5?tab=doc#ErrTokenExpired", "prompt": "How do I detect an expired token?"},
			m{"bytes": 1000, "code": 200, "codeText": "OK", "result": "Use errors.Is(err, jwt.ErrTokenExpired). The parser returns it when exp is in the past.", "url": "https://pkg.go.dev/github.com/golang-jwt/jwt/v5"}),
			obsWant{title: "Fetch pkg.go.dev/github.com/golang-jwt/jwt/v5", factsHave: []string{"asked: How do I detect", "Use errors.Is(err, jwt.ErrTokenExpired)."}, concepts: []string{"jwt"}}},
		{"web search", call(t, "WebSearch", "", m{"query": "golang jwt v5 expired token error"},
			m{"query": "golang jwt v5 expired token error", "results": []any{
				m{"tool_use_id": "x", "content": []m{{"title": "jwt package - pkg.go.dev", "url": "https://pkg.go.dev/github.com/golang-jwt/jwt/v5"}}},
				"jwt/v5 returns ErrTokenExpired wrapped in the validation error.",
			}}),
			obsWant{title: `Web search: "golang jwt v5 expired token error"`, factsHave: []string{"jwt package - pkg.go.dev (pkg.go.dev/github.com/golang-jwt/jwt/v5)", "ErrTokenExpired wrapped"}}},
		{"task agent", call(t, "Task", "", m{"description": "Find all token parsers", "prompt": "Search the repo for parse(tok) call sites", "subagent_type": "Explore"},
			m{"content": []m{{"type": "text", "text": "Found 2 call sites. refresh.go ignores the error too."}}, "totalToolUseCount": 5, "status": "completed"}),
			obsWant{title: "Agent Explore: Find all token parsers", subtitleHas: "5 tool uses", factsHave: []string{"refresh.go ignores the error too."}}},
		{"notebook edit", call(t, "NotebookEdit", "", m{"notebook_path": cwd + "/nb/analysis.ipynb", "cell_id": "c3", "new_source": "def load(path):\n    return pd.read_csv(path)", "cell_type": "code", "edit_mode": "insert"},
			m{"new_source": "def load(path)", "cell_type": "code"}),
			obsWant{typ: memory.TypeFeature, title: "Edit notebook nb/analysis.ipynb: insert code cell defining load", modified: []string{"nb/analysis.ipynb"}}},
		{"mcp write tool", call(t, "mcp__github__create_issue", "", m{"owner": "dev", "repo": "demo-app", "title": "Refresh endpoint ignores parse errors"},
			[]m{{"type": "text", "text": "Created issue #42"}}),
			obsWant{typ: memory.TypeChange, title: "github create_issue: Refresh endpoint ignores parse errors", factsHave: []string{"args: owner=dev, repo=demo-app", "result: Created issue #42"}}},
		{"mcp read tool", call(t, "mcp__postgres__query", "", m{"sql": "select count(*) from sessions"}, m{"content": []m{{"type": "text", "text": "count\n12"}}}),
			obsWant{typ: memory.TypeDiscovery, title: "postgres query: select count(*) from sessions", factsHave: []string{"sql=select count(*) from sessions", "result: count"}}},
		{"memnode own tools are skipped", call(t, "mcp__memnode__search", "", m{"query": "jwt"}, "[]"), obsWant{skip: true}},
		{"todo write is skipped", call(t, "TodoWrite", "", m{"todos": []m{{"content": "fix", "status": "pending"}}}, m{}), obsWant{skip: true}},
		{"unknown tool", call(t, "SlashCommand", "", m{"command": "/review"}, "Review started"),
			obsWant{title: "SlashCommand: /review", factsHave: []string{"result: Review started"}}},
		{"list directory", call(t, "LS", "", m{"path": cwd + "/internal"}, "- /home/dev/demo-app/internal/\n  - auth/\n  - server/\n"),
			obsWant{title: "List internal", factsHave: []string{"entries"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}

// Malformed payloads never panic and still give a bounded observation (or a skip).
func TestOfflineMalformedPayloads(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every tool over 5 MB and 280 KB payloads; make test runs it")
	}
	small := []json.RawMessage{
		nil, json.RawMessage(`null`), json.RawMessage(`[]`), json.RawMessage(`[1,2,3]`), json.RawMessage(`"text"`),
		json.RawMessage(`123`), json.RawMessage(`{`), json.RawMessage(`{"file_path": 5, "command": ["x"], "edits": "no"}`),
		json.RawMessage(`{"structuredPatch": [{"lines": [5, null, "+x"]}], "file": [], "results": [null, 1, "x"]}`),
		json.RawMessage(`{"file_path": "/x/\u0000\ud800.go", "old_string": "\u0000", "new_string": "if \"\\", "content": "\u202e"}`),
		json.RawMessage(`{"questions": [{"question": null}], "answers": {"a": {"b": [1]}}, "plan": "#"}`),
	}
	binaryish := strings.Repeat("A\x00\xff\xfe日本\n\t", 20_000) // ~280 KB raw, more as JSON
	ascii := strings.Repeat("word ", 1<<20)                    // 5 MB: beyond maxPayload
	big := []json.RawMessage{
		js(t, m{"file_path": binaryish, "content": binaryish, "command": binaryish, "pattern": binaryish, "url": binaryish,
			"old_string": binaryish, "new_string": binaryish + "\nif x {", "description": binaryish, "query": binaryish}),
		js(t, binaryish),
		js(t, m{"file_path": "/x/a.go", "content": ascii, "old_string": ascii, "new_string": ascii, "command": ascii}),
		js(t, ascii),
	}
	tools := []string{"Read", "Edit", "MultiEdit", "Write", "Bash", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "Task",
		"NotebookEdit", "ExitPlanMode", "AskUserQuestion", "mcp__x__y", "mcp__", "Whatever", "read_file"}
	var calls []ai.ToolCall
	for _, tool := range tools {
		for _, in := range small {
			for _, resp := range small {
				calls = append(calls, ai.ToolCall{ToolName: tool, Cwd: "/x", ToolInput: in, ToolResponse: resp, Prompt: "fix \xff"})
			}
		}
		for _, p := range big {
			calls = append(calls,
				ai.ToolCall{ToolName: tool, Cwd: "/x", ToolInput: p, ToolResponse: small[1], Prompt: binaryish},
				ai.ToolCall{ToolName: tool, Cwd: "/x", ToolInput: small[9], ToolResponse: p})
		}
	}
	obs := observeAll(t, calls)
	if len(obs) < len(calls)/2 {
		t.Fatalf("%d of %d malformed calls were skipped; a generic observation was expected for most", len(calls)-len(obs), len(calls))
	}
	var sawOversized bool
	for _, o := range obs {
		if o.Title == "Edit a.go" && containsStr(o.FilesModified, "a.go") && strings.Contains(strings.Join(o.Facts, " "), "too large to summarise") {
			sawOversized = true
		}
	}
	if !sawOversized {
		t.Error(`no "Edit a.go" observation for the oversized Edit input`)
	}
}

func TestOfflineDeterministicAndConcurrent(t *testing.T) {
	calls := fixtureCalls(t)
	first := dump(t, observeAll(t, calls))
	c := New()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			obs, _, err := c.Observe(context.Background(), calls)
			if err == nil && dump(t, obs) != first {
				err = errDiffers
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errDiffers = testErr("concurrent Observe gave a different result")

func TestOfflineObserveHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := New().Observe(ctx, fixtureCalls(t)); err == nil {
		t.Fatal("Observe with a cancelled context succeeded")
	}
	if _, _, err := New().Summarize(ctx, ai.SessionInput{}); err == nil {
		t.Fatal("Summarize with a cancelled context succeeded")
	}
}

func TestOfflineNameAndEstimate(t *testing.T) {
	if got := New().Name(); got != "offline" {
		t.Errorf("Name() = %q", got)
	}
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, strings.Repeat("x", 400): 100} {
		if got := memory.EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%d bytes) = %d, want %d", len(s), got, want)
		}
	}
}

func TestOfflineBatchSkipsWorthlessCalls(t *testing.T) {
	calls := []ai.ToolCall{
		bashCall(t, "", "pwd", "", out(cwd+"\n", "")),
		call(t, "TodoWrite", "", m{"todos": []m{}}, m{}),
		fixtureCalls(t)[0],
		bashCall(t, "", "cd internal", "", out("", "")),
	}
	obs := observeAll(t, calls)
	if len(obs) != 1 || obs[0].Title != "Read internal/auth/middleware.go" {
		t.Fatalf("got %s, want only the Read", dump(t, obs))
	}
	// A failing quiet command is kept: the failure is worth remembering.
	failed := observeAll(t, []ai.ToolCall{call(t, "Bash", "", m{"command": "cd nowhere"}, m{"stdout": "", "stderr": "cd: no such file or directory: nowhere", "exit_code": 1})})
	if len(failed) != 1 || !strings.Contains(strings.Join(failed[0].Facts, " "), "exit 1") {
		t.Fatalf("failed cd: %s", dump(t, failed))
	}
}

// rawStringHead decodes any prefix of a long JSON string, wherever the cut falls relative
// to its escapes.
func TestRawStringHeadCutsBetweenEscapes(t *testing.T) {
	full := `C:\\dir\\file "quoted" \\\\server é <b>` + "\t\u2028 " + strings.Repeat("z", 40) // <, >, U+2028 marshal as \uXXXX
	raw, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	for n := 2; n < len(raw); n++ {
		got, ok := rawStringHead(raw, n)
		if !ok || !strings.HasPrefix(full, strings.TrimRight(got, "\uFFFD")) {
			t.Fatalf("rawStringHead(%s, %d) = %q, %v", raw, n, got, ok)
		}
	}
}

// TestOfflineFailedCalls: a call whose response is the canonical failure (Claude Code's
// PostToolUseFailure, normalised by its adapter) is recorded as failed, with its error.
func TestOfflineFailedCalls(t *testing.T) {
	tests := []struct {
		name string
		call ai.ToolCall
		want obsWant
	}{
		{"failed go test", call(t, "Bash", fixturePrompt, m{"command": "go test ./internal/auth/"},
			m{"error": "Exit code 1\n--- FAIL: TestExpiredTokenReturns401 (0.00s)\nFAIL", "is_interrupt": false, "duration_ms": 812}),
			obsWant{title: "Tests fail: go test ./internal/auth/", factsHave: []string{"exit 1", "--- FAIL: TestExpiredTokenReturns401"}}},
		{"interrupted build", call(t, "Bash", "", m{"command": "go build ./..."}, m{"error": "Interrupted by user", "is_interrupt": true}),
			obsWant{titleHas: []string{"fails"}}},
		{"failed read", call(t, "Read", "", m{"file_path": cwd + "/NOTES.md"}, m{"error": "File does not exist."}),
			obsWant{titleHas: []string{"Failed: ", "NOTES.md"}, factsHave: []string{"error: File does not exist."}}},
		{"failed mcp call", call(t, "mcp__github__create_issue", "", m{"title": "x"}, m{"error": "HTTP 401 Bad credentials"}),
			obsWant{titleHas: []string{"Failed: "}, factsHave: []string{"error: HTTP 401 Bad credentials"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkObs(t, []ai.ToolCall{tt.call}, tt.want) })
	}
}
