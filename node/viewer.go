package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/logfile"
	"github.com/memnode/memnode/memory"
)

// KeyStore is where AI provider keys entered in the viewer go (keys.Store satisfies it).
// Keys are written, never read back through it.
type KeyStore interface {
	Set(provider, key string) error
	List() ([]string, error)
	Backend() string
}

// viewerBackend serves the web viewer's settings and logs pages.
type viewerBackend struct{ n *Node }

var _ api.ViewerBackend = viewerBackend{}

// maxLogTail bounds how much of a log the logs page reads.
const maxLogTail = 512 << 10

// Settings reports settings.json, the settings this node runs with (the live ones as
// changed since it started), the defaults, every setting's description, and which saved
// changes wait for a restart.
func (v viewerBackend) Settings(ctx context.Context) (apitype.ViewerSettings, error) {
	path := datadir.Dir(v.n.cfg.DataDir).Settings()
	file, err := configs.ReadFile(v.n.cfg.DataDir)
	if err != nil {
		return apitype.ViewerSettings{}, err
	}
	var fields []apitype.SettingField
	for _, f := range configs.Fields() {
		in := configs.Describe(f.Name)
		fields = append(fields, apitype.SettingField{Name: f.Name, Kind: f.Kind, Restart: !in.Live, Group: in.Group, Help: in.Help,
			Unit: in.Unit, Min: in.Min, Max: in.Max, Choices: in.Choices})
	}
	running := v.n.settings()
	st := apitype.ViewerSettings{File: file, Effective: running, Defaults: configs.Default(), Fields: fields, Path: path,
		Groups: configs.Groups, Pending: []string{}, CanRestart: v.n.cfg.Restart != nil, Started: v.n.created.UnixMilli()}
	if v.n.cfg.Reload != nil {
		if next, err := v.n.cfg.Reload(); err == nil {
			st.Pending = nonNil(configs.Changed(running, next))
		}
	} else {
		st.Pending = nil
	}
	return st, nil
}

// SaveSettings validates file with the node's own rules, writes it as settings.json and
// applies at once what a running node can (configs.Info.Live): context bounds, skip lists,
// excluded projects, … The rest waits for a restart (Pending says which).
func (v viewerBackend) SaveSettings(ctx context.Context, file json.RawMessage) (apitype.ViewerSettings, error) {
	if err := configs.WriteFile(v.n.cfg.DataDir, file); err != nil {
		if inv := (*configs.InvalidFileError)(nil); errors.As(err, &inv) {
			return apitype.ViewerSettings{}, fmt.Errorf("%w: %w", memory.ErrInvalid, inv.Err)
		}
		return apitype.ViewerSettings{}, err
	}
	if v.n.cfg.Reload == nil {
		v.n.log.Info("settings saved from the viewer; they apply at the next start")
		return v.Settings(ctx)
	}
	next, err := v.n.cfg.Reload()
	if err != nil {
		return apitype.ViewerSettings{}, fmt.Errorf("%w: %w", memory.ErrInvalid, err)
	}
	v.n.applyLive(next)
	return v.Settings(ctx)
}

// ReloadSettings reads the settings again (memnode config set wrote settings.json) and
// applies the live ones at once.
func (v viewerBackend) ReloadSettings(ctx context.Context) (apitype.SettingsReload, error) {
	if v.n.cfg.Reload == nil {
		return apitype.SettingsReload{}, fmt.Errorf("%w: this node reads its settings only when it starts", memory.ErrInvalid)
	}
	next, err := v.n.cfg.Reload()
	if err != nil {
		return apitype.SettingsReload{}, fmt.Errorf("%w: %w", memory.ErrInvalid, err)
	}
	before := v.n.settings()
	v.n.applyLive(next)
	return apitype.SettingsReload{Applied: nonNil(configs.Changed(before, v.n.settings())), Pending: nonNil(configs.Changed(v.n.settings(), next))}, nil
}

// Restart stops the node and starts it again (the process re-executes itself); the
// viewer's sessions are kept in the data dir, so the page stays logged in.
func (v viewerBackend) Restart(ctx context.Context) error {
	if v.n.cfg.Restart == nil {
		return fmt.Errorf("%w: this node cannot restart itself; run memnode stop && memnode start", memory.ErrInvalid)
	}
	v.n.log.Info("restart asked from the viewer")
	v.n.cfg.Restart()
	return nil
}

// Facets lists the values the viewer's filters offer: projects, devices, coding agents.
func (v viewerBackend) Facets(ctx context.Context) (apitype.ViewerFacets, error) {
	rep := v.n.rep.Load()
	if rep == nil {
		return apitype.ViewerFacets{}, errNotReady
	}
	f, err := rep.Facets(ctx)
	if err != nil {
		return apitype.ViewerFacets{}, v.n.checkCorrupt(err)
	}
	names, err := rep.DeviceNames(ctx)
	if err != nil {
		return apitype.ViewerFacets{}, v.n.checkCorrupt(err)
	}
	out := apitype.ViewerFacets{Projects: nonNil(f.Projects), Platforms: nonNil(f.Platforms), Devices: []apitype.ViewerDevice{}}
	for _, o := range f.Origins {
		out.Devices = append(out.Devices, apitype.ViewerDevice{Origin: o, Name: names[o]})
	}
	return out, nil
}

// FirstRun says which agents are hooked up and whether claude-mem's history is here.
func (v viewerBackend) FirstRun(ctx context.Context) (apitype.ViewerFirstRun, error) {
	if v.n.cfg.FirstRun == nil {
		return apitype.ViewerFirstRun{Agents: []string{}}, nil
	}
	fr := v.n.cfg.FirstRun()
	if fr.Agents == nil {
		fr.Agents = []string{}
	}
	return fr, nil
}

// Log returns the last lines of the node's or the hooks' log.
func (v viewerBackend) Log(ctx context.Context, name string, lines int) (apitype.ViewerLog, error) {
	dd := datadir.Dir(v.n.cfg.DataDir)
	path := dd.NodeLog()
	if name == "hook" {
		path = dd.HookLog()
	}
	all, err := logfile.Tail(path, maxLogTail, lines)
	if err != nil {
		return apitype.ViewerLog{}, err
	}
	return apitype.ViewerLog{Name: name, Lines: all}, nil
}

// errNoKeyStore is returned when the node was started without a key store.
var errNoKeyStore = fmt.Errorf("%w: this node has no key store; use memnode keys set PROVIDER", memory.ErrInvalid)

// Keys names the key store and the providers with a stored key; never a key.
func (v viewerBackend) Keys(ctx context.Context) (apitype.ViewerKeys, error) {
	if v.n.cfg.OpenKeys == nil {
		return apitype.ViewerKeys{}, errNoKeyStore
	}
	st, err := v.n.cfg.OpenKeys()
	if err != nil {
		return apitype.ViewerKeys{Error: err.Error(), Stored: []string{}}, nil
	}
	names, err := st.List()
	if err != nil {
		return apitype.ViewerKeys{Backend: st.Backend(), Error: err.Error(), Stored: []string{}}, nil
	}
	if names == nil {
		names = []string{}
	}
	return apitype.ViewerKeys{Backend: st.Backend(), Stored: names}, nil
}

// SetKey stores provider's key; the chain uses it from the next start.
func (v viewerBackend) SetKey(ctx context.Context, provider, key string) (apitype.ViewerKeys, error) {
	if v.n.cfg.OpenKeys == nil {
		return apitype.ViewerKeys{}, errNoKeyStore
	}
	st, err := v.n.cfg.OpenKeys()
	if err != nil {
		return apitype.ViewerKeys{}, fmt.Errorf("open key store: %w", err)
	}
	if err := st.Set(provider, key); err != nil {
		return apitype.ViewerKeys{}, fmt.Errorf("%w: %w", memory.ErrInvalid, err)
	}
	v.n.log.Info("ai key stored from the viewer", "provider", provider, "store", st.Backend())
	return v.Keys(ctx)
}
