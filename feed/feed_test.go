package feed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestEverySubscriberGetsEveryChangeInOrder(t *testing.T) {
	b := New()
	a, c := b.Subscribe(0), b.Subscribe(0)
	defer a.Close()
	defer c.Close()
	for i := 0; i < 10; i++ {
		if seq := b.Publish(Change{Origin: Local, Observations: []string{"o"}}); seq != uint64(i+1) {
			t.Fatalf("seq = %d, want %d", seq, i+1)
		}
	}
	for _, s := range []*Subscription{a, c} {
		got, of, err := s.Next(context.Background())
		if err != nil || of || len(got) != 10 {
			t.Fatalf("Next = %d changes, overflow %v, %v", len(got), of, err)
		}
		for i, ch := range got {
			if ch.Seq != uint64(i+1) || ch.At.IsZero() {
				t.Fatalf("change %d: seq %d at %v", i, ch.Seq, ch.At)
			}
		}
	}
}

func TestEmptyChangeIsNotPublished(t *testing.T) {
	b := New()
	s := b.Subscribe(0)
	defer s.Close()
	if seq := b.Publish(Change{Origin: Local}); seq != 0 {
		t.Fatalf("empty change got seq %d", seq)
	}
	if got, of := s.Take(); len(got) != 0 || of {
		t.Fatalf("empty change delivered: %v %v", got, of)
	}
	var nilBus *Bus
	if nilBus.Publish(Change{LocalOps: true}) != 0 {
		t.Fatal("nil bus published")
	}
}

func TestSlowSubscriberOverflowsWithoutBlockingPublisher(t *testing.T) {
	b := New()
	slow := b.Subscribe(4)
	defer slow.Close()
	for i := 0; i < 100; i++ {
		b.Publish(Change{Forgotten: []string{"x"}})
	}
	got, of := slow.Take()
	if !of {
		t.Fatal("overflow not reported")
	}
	if len(got) > 4 {
		t.Fatalf("buffer exceeded: %d pending", len(got))
	}
	if _, of := slow.Take(); of {
		t.Fatal("overflow reported twice")
	}
}

func TestCloseEndsNext(t *testing.T) {
	b := New()
	s := b.Subscribe(0)
	b.Publish(Change{Sessions: []string{"s"}})
	b.Close()
	b.Close()
	if got, _, err := s.Next(context.Background()); err != nil || len(got) != 1 {
		t.Fatalf("pending change lost at close: %v %v", got, err)
	}
	if _, _, err := s.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after close = %v", err)
	}
	if b.Publish(Change{Sessions: []string{"s"}}) != 0 {
		t.Fatal("closed bus published")
	}
	late := b.Subscribe(0)
	if _, _, err := late.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe after close: %v", err)
	}
}

func TestNextHonoursContext(t *testing.T) {
	b := New()
	s := b.Subscribe(0)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v", err)
	}
}

func TestConcurrentPublishersAndSubscribers(t *testing.T) {
	b := New()
	const pubs, each = 4, 500
	subs := make([]*Subscription, 3)
	for i := range subs {
		subs[i] = b.Subscribe(pubs * each)
	}
	var wg sync.WaitGroup
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				b.Publish(Change{Observations: []string{"o"}})
			}
		}()
	}
	counts := make([]int, len(subs))
	var rg sync.WaitGroup
	for i, s := range subs {
		rg.Add(1)
		go func() {
			defer rg.Done()
			var last uint64
			for {
				got, of, err := s.Next(context.Background())
				if err != nil {
					return
				}
				if of {
					t.Error("overflow with a buffer as large as the run")
				}
				for _, c := range got {
					if c.Seq <= last {
						t.Errorf("out of order: %d after %d", c.Seq, last)
					}
					last = c.Seq
					counts[i]++
				}
			}
		}()
	}
	wg.Wait()
	b.Close()
	rg.Wait()
	for i, n := range counts {
		if n != pubs*each {
			t.Fatalf("subscriber %d got %d of %d", i, n, pubs*each)
		}
	}
}
