package apitype

import "time"

// Status is the body of GET /api/status: the node's state, one sub-struct per part. Parts
// added later (team, viewer) add their own sub-struct; a part a node does not run is absent
// (nil) or its zero value.
type Status struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	DataDir string `json:"data_dir"`
	// Addr is the TCP address; TCPError says why it is not served (taken by another
	// program), empty when it is. Socket is the Unix socket hooks, CLI and MCP use.
	Addr     string `json:"addr"`
	TCPError string `json:"tcp_error,omitempty"`
	Socket   string `json:"socket"`
	// Origin is this device's replica origin (its libp2p peer ID).
	Origin string `json:"origin"`
	// Ready is false while the database is not open, or once it was found corrupt
	// (Storage.State "corrupt").
	Ready bool `json:"ready"`

	Records    RecordCounts     `json:"records"`
	Queue      QueueStatus      `json:"queue"`
	Compressor CompressorStatus `json:"compressor"`
	Embed      EmbedStatus      `json:"embed"`
	Sync       SyncStatus       `json:"sync"`
	Storage    StorageStatus    `json:"storage"`
	Team       TeamStatus       `json:"team"`
	// Capture says what is not recorded now, one line each: the user's pauses (memnode
	// pause), opt-in mode (setting capture); empty when every project is recorded.
	Capture []string `json:"capture,omitempty"`
	// Agents are the coding agents whose events reached this node since it started, each
	// with the time of its last one (epoch ms); memnode doctor shows them.
	Agents []AgentSeen `json:"agents,omitempty"`
}

// AgentSeen is when the last event of one coding agent reached the node.
type AgentSeen struct {
	Platform  string `json:"platform"`
	LastEvent int64  `json:"last_event"`
}

// RecordCounts are the sizes of the replica's tables.
type RecordCounts struct {
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
	Ops          int `json:"ops"`
	Tombstones   int `json:"tombstones"`
}

// QueueStatus is the durable event queue and what the workers did with it since start.
type QueueStatus struct {
	// Waiting is the number of events acknowledged and not yet turned into records.
	Waiting   int   `json:"waiting"`
	Ingested  int64 `json:"ingested"`
	Processed int64 `json:"processed"`
	// Failures counts batches that failed and stayed queued for a retry.
	Failures int64 `json:"failures"`
	// Dead counts events set aside after failing store.MaxAttempts times (not retried;
	// `memnode repair --purge-dead` deletes them).
	Dead int `json:"dead"`
}

// CompressorStatus names the compressor; AI is set when it is a provider chain.
type CompressorStatus struct {
	Name string    `json:"name"`
	AI   *AIStatus `json:"ai,omitempty"`
}

// AIStatus reports the provider chain: per-provider usage and the daily token budget.
type AIStatus struct {
	Providers []ProviderStatus `json:"providers"`
	// BudgetLeft is the tokens left today; -1 means unlimited.
	BudgetLeft int64 `json:"budget_left"`
	// BudgetUsed is the tokens used today (settled); BudgetLimit the daily cap, -1 when
	// there is none.
	BudgetUsed  int64 `json:"budget_used"`
	BudgetLimit int64 `json:"budget_limit"`
}

// ProviderStatus is one provider's usage since start.
type ProviderStatus struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	// Calls counts requests sent (each retry attempt counts).
	Calls        int64 `json:"calls"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// Errors counts failures by class (auth, quota, rate_limit, …).
	Errors map[string]int64 `json:"errors,omitempty"`
	// DisabledUntil is set while the chain skips the provider (auth, quota, long rate limit).
	DisabledUntil time.Time `json:"disabled_until,omitzero"`
	// LastError is the last failure, one line, key-free.
	LastError string `json:"last_error,omitempty"`
	// CLI is an agent CLI provider's executable, or "not found: <command>"; "" for the
	// HTTP providers.
	CLI string `json:"cli,omitempty"`
}

// EmbedStatus is the embedding worker's state, one line ("off — no model", "on: …").
type EmbedStatus struct {
	State string `json:"state"`
	// Model, Embedded, Total and Failed count the observations embedded for the model
	// (`memnode embed status --wait` shows a backfill's progress from them).
	Model    string `json:"model,omitempty"`
	Embedded int    `json:"embedded,omitempty"`
	Total    int    `json:"total,omitempty"`
	Failed   int    `json:"failed,omitempty"`
}

// SyncStatus is device sync's state in one line ('memnode peers' has the details).
type SyncStatus struct {
	State string `json:"state"`
}

// TeamStatus is team memory as the node knows it without asking the cluster (`memnode team
// status` asks it: leader, nodes, members, pull lag).
type TeamStatus struct {
	Joined bool     `json:"joined"`
	Name   string   `json:"name,omitempty"`
	Shared []string `json:"shared,omitempty"`
	// Reachable is whether the last exchange with the cluster succeeded.
	Reachable bool `json:"reachable"`
	// PushBacklog counts this device's ops not yet on the cluster.
	PushBacklog int `json:"push_backlog"`
	// Rejected counts pulled ops refused on verification (forged, or a tombstone without right).
	Rejected  int    `json:"rejected"`
	LastError string `json:"last_error,omitempty"`
	// Squatted counts rows someone else wrote under this device's ID and sequence numbers
	// (`memnode team status` gives each with its cause).
	Squatted int `json:"squatted,omitempty"`
}

// TeamHit is one record found on the team cluster (`search --team`, MCP search team=true).
type TeamHit struct {
	ID        string  `json:"id"`
	Project   string  `json:"project"`
	Kind      string  `json:"kind"`
	Type      string  `json:"type"`
	Title     string  `json:"title"`
	Snippet   string  `json:"snippet"`
	Author    string  `json:"author"` // "user/device", shown as @user/device
	CreatedAt int64   `json:"created_at"`
	Score     float64 `json:"score"`
}

// TeamSearchReply is the answer of GET /api/team/search?q=…&project=…&limit=….
type TeamSearchReply struct {
	Hits []TeamHit `json:"hits"`
	// Unreachable, when set, is why the cluster did not answer ("cluster unreachable (last
	// contact …)"); Local then holds this device's own results for the query (its shared
	// projects' records pulled so far included).
	Unreachable string `json:"unreachable,omitempty"`
	Local       []Hit  `json:"local,omitempty"`
}

// Storage states.
const (
	StorageOK      = "ok"
	StorageFull    = "full"
	StorageCorrupt = "corrupt"
)

// StorageStatus is the health of the data dir's databases: StorageOK, StorageFull (new
// events are refused until space is freed) or StorageCorrupt (the node stopped taking
// writes; 'memnode repair' recovers what is readable). Message is one line for people.
type StorageStatus struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}
