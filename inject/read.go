package inject

import (
	"context"
	"fmt"

	"github.com/memnode/memnode/memory"
)

// Reader is what the session-start context is read from (the SQLite replica implements it).
type Reader interface {
	Origin() string
	RecentObservations(ctx context.Context, project string, limit int) ([]memory.Observation, error)
	RecentSummaries(ctx context.Context, project string, limit int) ([]memory.Summary, error)
	// PinnedObservations are the project's pinned observations and the global notes,
	// newest first.
	PinnedObservations(ctx context.Context, project string, limit int) ([]memory.Observation, error)
	// ProjectStats is the observation count and total discovery tokens of a project.
	ProjectStats(ctx context.Context, project string) (observations, discoveryTokens int, err error)
	// DeviceNames maps every known origin to its device name.
	DeviceNames(ctx context.Context) (map[string]string, error)
}

// Read loads from r everything Render needs for project within lim; the caller sets Now
// and Location.
func Read(ctx context.Context, r Reader, project string, lim Limits) (Input, error) {
	in := Input{Project: project, LocalOrigin: r.Origin()}
	var err error
	if in.Observations, err = r.RecentObservations(ctx, project, lim.Observations); err != nil {
		return Input{}, fmt.Errorf("read context: %w", err)
	}
	if in.Summaries, err = r.RecentSummaries(ctx, project, lim.Sessions); err != nil {
		return Input{}, fmt.Errorf("read context: %w", err)
	}
	if in.Pinned, err = r.PinnedObservations(ctx, project, maxPinnedNotes); err != nil {
		return Input{}, fmt.Errorf("read context: %w", err)
	}
	// A pinned observation heads the context; it is not repeated in the rows below.
	if len(in.Pinned) > 0 {
		pinned := map[string]bool{}
		for _, o := range in.Pinned {
			pinned[o.ID] = true
		}
		kept := in.Observations[:0]
		for _, o := range in.Observations {
			if !pinned[o.ID] {
				kept = append(kept, o)
			}
		}
		in.Observations = kept
	}
	if in.TotalObservations, in.TotalDiscoveryTokens, err = r.ProjectStats(ctx, project); err != nil {
		return Input{}, fmt.Errorf("read context: %w", err)
	}
	names, err := r.DeviceNames(ctx)
	if err != nil {
		return Input{}, fmt.Errorf("read context: %w", err)
	}
	// Records from other devices carry their device's name: "[desktop]".
	in.DeviceName = func(origin string) string { return names[origin] }
	return in, nil
}
