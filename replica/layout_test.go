package replica

import (
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

// The queue database's name is derived here and also listed in the data-dir layout.
func TestQueuePathMatchesDataDirLayout(t *testing.T) {
	d := datadir.Dir(t.TempDir())
	if got, want := QueuePath(d.DB()), d.QueueDB(); got != want {
		t.Fatalf("QueuePath(%s) = %s, datadir says %s", d.DB(), got, want)
	}
}
