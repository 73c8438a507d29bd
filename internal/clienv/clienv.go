// Package clienv resolves what memnode's commands read from the outside world — the data
// dir, the settings file and the environment overrides — in one place shared by the memnode
// CLI and the lean memnode-hook binary. Only cmd/ packages import it.
package clienv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/datadir"
)

// Resolve returns the absolute data dir (MEMNODE_DATA_DIR or ~/.memnode) and the settings:
// defaults, then settings.json, then environment overrides, then per-user defaults for what
// is still unset. On a settings error it still returns usable values (the defaults), so a
// hook can keep working.
func Resolve(getenv func(string) string) (dataDir string, s configs.Settings, err error) {
	s = configs.Default()
	defer func() { fillDefaults(&s) }()
	dir, err := datadir.Resolve(getenv)
	if err != nil {
		return "", s, err
	}
	dataDir = string(dir)
	loaded, err := configs.Load(dataDir)
	if err != nil {
		return dataDir, s, err
	}
	s = loaded
	for _, o := range []struct {
		env      string
		dst      *int
		min, max int
	}{
		{"MEMNODE_PORT", &s.Port, 1, 65535},
		{"MEMNODE_SYNC_PORT", &s.SyncPort, -1, 65535},
		{"MEMNODE_GOSSIP_PORT", &s.GossipPort, -1, 65535},
	} {
		if v := getenv(o.env); v != "" {
			n, perr := strconv.Atoi(v)
			if perr != nil || n < o.min || n > o.max {
				return dataDir, s, fmt.Errorf("%s=%q is not a port number", o.env, v)
			}
			*o.dst = n
		}
	}
	if v := getenv("MEMNODE_TRANSPORT"); v != "" {
		if v != configs.TransportUnix && v != configs.TransportTCP {
			return dataDir, s, fmt.Errorf("MEMNODE_TRANSPORT=%q: want %q or %q", v, configs.TransportUnix, configs.TransportTCP)
		}
		s.Transport = v
	}
	if v := getenv("MEMNODE_SYNC_HOST"); v != "" {
		s.SyncHost = v
	}
	if v := getenv("MEMNODE_DEVICE_NAME"); v != "" {
		s.DeviceName = v
	}
	return dataDir, s, nil
}

func fillDefaults(s *configs.Settings) {
	uid := os.Getuid()
	if s.Port == 0 {
		s.Port = configs.DefaultPort(uid)
	}
	if s.SyncPort == 0 {
		s.SyncPort = configs.DefaultSyncPort(uid)
	}
	if s.GossipPort == 0 {
		s.GossipPort = configs.DefaultGossipPort(uid)
	}
	if s.Transport == "" {
		s.Transport = configs.TransportUnix
	}
	if s.SyncHost == "" {
		s.SyncHost = "127.0.0.1"
	}
	if s.DeviceName == "" {
		s.DeviceName, _ = os.Hostname()
	}
}

// Sibling returns the executable called name in the directory of the running binary, if
// there is one: memnode and memnode-hook are installed side by side and find each other so.
func Sibling(name string) (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	p := filepath.Join(filepath.Dir(exe), name)
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", false
	}
	return p, true
}
