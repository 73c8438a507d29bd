package apitype

import (
	"encoding/json"
	"time"
)

// ViewerCode is the answer of POST /api/viewer/code: a single-use login code for the web
// viewer, and the URL that redeems it. Both are secrets until used: print them to the
// user who asked, never log them.
type ViewerCode struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

// SettingField describes one setting for the viewer's settings page.
type SettingField struct {
	Name string `json:"name"` // the settings.json key
	// Kind is how the value is written: bool, int, string, duration, list, map.
	Kind string `json:"kind"`
	// Restart is true when the node reads the setting only when it starts; false: a saved
	// change applies at once.
	Restart bool `json:"restart"`
	// Group is the settings page's section (configs.Groups); Help what the setting does;
	// Unit what its number counts; Min and Max the range the node accepts; Choices the
	// values it takes, when it takes a few.
	Group   string   `json:"group"`
	Help    string   `json:"help"`
	Unit    string   `json:"unit,omitempty"`
	Min     *int64   `json:"min,omitempty"`
	Max     *int64   `json:"max,omitempty"`
	Choices []string `json:"choices,omitempty"`
}

// ViewerSettings is the answer of GET and PUT /api/viewer/settings. It holds no secret:
// AI keys live in the key store, never in settings.
type ViewerSettings struct {
	// File is settings.json as it is on disk ({} when there is none).
	File json.RawMessage `json:"file"`
	// Effective are the settings the running node uses (file, env and flags over the
	// defaults); Defaults are the built-in values.
	Effective any            `json:"effective"`
	Defaults  any            `json:"defaults"`
	Fields    []SettingField `json:"fields"`
	// Path is the settings file the node reads.
	Path string `json:"path"`
	// Groups orders the page's sections. Pending lists the saved settings that differ
	// from what the node runs with and wait for a restart (null when the node cannot
	// tell). CanRestart: POST /api/viewer/restart works.
	Groups     []string `json:"groups"`
	Pending    []string `json:"pending"`
	CanRestart bool     `json:"can_restart"`
	// Started is when the running node started (epoch ms): it changes with a restart.
	Started int64 `json:"started"`
}

// ViewerLog is the answer of GET /api/viewer/logs: the tail of one log (already redacted
// when it was written).
type ViewerLog struct {
	Name  string   `json:"name"` // node or hook
	Lines []string `json:"lines"`
}

// ViewerChange is the data of a "change" event on GET /api/viewer/stream: one commit of
// the change feed, by record IDs (the page fetches the records it shows).
type ViewerChange struct {
	Seq          uint64   `json:"seq"`
	Origin       string   `json:"origin"` // local, device, team, import
	Observations []string `json:"observations,omitempty"`
	Summaries    []string `json:"summaries,omitempty"`
	Prompts      []string `json:"prompts,omitempty"`
	Sessions     []string `json:"sessions,omitempty"`
	Forgotten    []string `json:"forgotten,omitempty"`
}

// ViewerFeed is the answer of GET /api/viewer/feed (the query of GET /api/search): the full
// records of one page, and how many hits the page had (fewer than the limit: the end).
type ViewerFeed struct {
	Hits  int    `json:"hits"`
	Items []Item `json:"items"`
}

// ViewerKeys is the answer of GET and PUT /api/viewer/keys: which providers have a key in
// the key store, and which store. It never holds a key.
type ViewerKeys struct {
	Backend string   `json:"backend,omitempty"`
	Stored  []string `json:"stored"`
	// Error says why the key store did not open (the page shows it).
	Error string `json:"error,omitempty"`
}

// ViewerKey is the body of PUT /api/viewer/keys/PROVIDER. The key goes to the key store and
// is never answered, logged or shown again.
type ViewerKey struct {
	Key string `json:"key"`
}

// ViewerFacets is the answer of GET /api/viewer/facets: the values the viewer's filters
// offer as choices (projects, devices, coding agents of the sessions held here).
type ViewerFacets struct {
	Projects  []string       `json:"projects"`
	Platforms []string       `json:"platforms"`
	Devices   []ViewerDevice `json:"devices"`
}

// ViewerDevice is one origin a record can come from and how the viewer names it.
type ViewerDevice struct {
	Origin string `json:"origin"`
	Name   string `json:"name,omitempty"` // the device's name when known
}

// ViewerFirstRun is the answer of GET /api/viewer/firstrun: what the empty feed tells a new
// user — the coding agents hooked up to memnode, and claude-mem's database when one is on
// this machine (its history can be imported).
type ViewerFirstRun struct {
	Agents    []string `json:"agents"`
	ClaudeMem string   `json:"claude_mem,omitempty"` // path of claude-mem.db
	// Histories are the coding agents whose past sessions are on this machine, to import
	// (memnode import --from-<platform>, or POST /api/viewer/import).
	Histories []ViewerHistory `json:"histories,omitempty"`
}

// ViewerHistory is one agent's past sessions on this machine.
type ViewerHistory struct {
	Platform string `json:"platform"` // claude-code, codex, …
	Display  string `json:"display"`  // "Claude Code"
	Dir      string `json:"dir"`      // where they are
	Sessions int    `json:"sessions"` // how many session files
}

// ViewerImport is the answer of GET and POST /api/viewer/import: the import of an agent's
// past sessions the viewer started (one at a time), while it runs and once it is over.
type ViewerImport struct {
	Platform string `json:"platform,omitempty"` // "" before the first
	Running  bool   `json:"running"`
	Done     int    `json:"done"`  // session files done
	Total    int    `json:"total"` // session files in all
	// Summary says what the import did, a line each, once it is over; Error why it stopped.
	Summary []string `json:"summary,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// SettingsReload is the answer of POST /api/settings/reload (memnode config set asks it of a
// running node): the settings the node applied at once, and the saved ones that wait for a
// restart.
type SettingsReload struct {
	Applied []string `json:"applied"`
	Pending []string `json:"pending"`
}
