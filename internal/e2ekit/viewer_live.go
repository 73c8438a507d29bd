package e2ekit

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
)

// MainThread is the page's main-thread work so far (CDP Performance metrics in thread
// time: CPU the renderer spent, which a busy machine does not inflate), in ms by metric.
func (b *Browser) MainThread() map[string]float64 {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if !b.perfOn {
		if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks}); err != nil {
			b.T.Fatalf("performance metrics: %v", err)
		}
		b.perfOn = true
	}
	res, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		b.T.Fatalf("performance metrics: %v", err)
	}
	m := map[string]float64{}
	for _, x := range res.Metrics {
		m[x.Name] = x.Value * 1000
	}
	return m
}
