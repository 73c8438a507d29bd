package inject

import (
	"context"
	"errors"
	"testing"

	"github.com/memnode/memnode/memory"
)

// fakeReader is a Reader whose answers are fields.
type fakeReader struct {
	obs   []memory.Observation
	sums  []memory.Summary
	names map[string]string
	err   error
	asked []int // limits asked for: observations, summaries
}

var _ Reader = (*fakeReader)(nil)

func (f *fakeReader) Origin() string { return "dev-a" }
func (f *fakeReader) RecentObservations(_ context.Context, _ string, limit int) ([]memory.Observation, error) {
	f.asked = append(f.asked, limit)
	return f.obs, nil
}
func (f *fakeReader) RecentSummaries(_ context.Context, _ string, limit int) ([]memory.Summary, error) {
	f.asked = append(f.asked, limit)
	return f.sums, f.err
}
func (f *fakeReader) ProjectStats(context.Context, string) (int, int, error) { return 42, 9000, nil }
func (f *fakeReader) DeviceNames(context.Context) (map[string]string, error) { return f.names, nil }

func TestReadGathersWhatRenderNeeds(t *testing.T) {
	r := &fakeReader{
		obs:   []memory.Observation{{ID: "o1", Origin: "dev-b", Title: "from the desktop"}},
		sums:  []memory.Summary{{ID: "s1", Origin: "dev-a"}},
		names: map[string]string{"dev-b": "desktop"},
	}
	in, err := Read(context.Background(), r, "billing", Limits{Observations: 50, Full: 5, Sessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	if in.Project != "billing" || in.LocalOrigin != "dev-a" || len(in.Observations) != 1 || len(in.Summaries) != 1 ||
		in.TotalObservations != 42 || in.TotalDiscoveryTokens != 9000 || in.DeviceName("dev-b") != "desktop" {
		t.Fatalf("input = %+v", in)
	}
	if len(r.asked) != 2 || r.asked[0] != 50 || r.asked[1] != 3 {
		t.Fatalf("limits asked = %v, want observations 50 and sessions 3", r.asked)
	}
	r.err = errors.New("disk on fire")
	if _, err := Read(context.Background(), r, "billing", Limits{}); !errors.Is(err, r.err) {
		t.Fatalf("error = %v, want it wrapped", err)
	}
}
