package configs

import (
	"slices"
	"testing"
)

// TestEverySettingIsDescribed: a setting added to Settings without a description, a group
// or with a range its default falls outside fails here, before the settings page shows a
// bare key.
func TestEverySettingIsDescribed(t *testing.T) {
	def := Default()
	for _, f := range Fields() {
		in, ok := infos[f.Name]
		if !ok || in.Help == "" || !slices.Contains(Groups, in.Group) {
			t.Errorf("%s: described as %+v", f.Name, in)
		}
		if in.Min != nil && *in.Min > *in.Max {
			t.Errorf("%s: range %d..%d", f.Name, *in.Min, *in.Max)
		}
	}
	if len(infos) != len(Fields()) {
		t.Errorf("%d descriptions for %d settings (one names no setting)", len(infos), len(Fields()))
	}
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestWithLiveTakesOnlyLiveSettings: a running node applies the context bounds and skip
// lists at once, the port and workers only when it starts.
func TestWithLiveTakesOnlyLiveSettings(t *testing.T) {
	run := Default()
	next := Default()
	next.ContextObservations, next.ExcludedProjects, next.SkipTools = 7, []string{"scratch"}, []string{"Bash"}
	next.Workers, next.Port = 5, 40000
	got := run.WithLive(next)
	if got.ContextObservations != 7 || !slices.Equal(got.ExcludedProjects, []string{"scratch"}) || !slices.Equal(got.SkipTools, []string{"Bash"}) {
		t.Errorf("live settings not applied: %+v", got)
	}
	if got.Workers != run.Workers || got.Port != run.Port {
		t.Errorf("restart settings applied live: workers %d port %d", got.Workers, got.Port)
	}
	if ch := Changed(got, next); !slices.Equal(ch, []string{"port", "workers"}) {
		t.Errorf("still to apply after a restart: %v", ch)
	}
}
