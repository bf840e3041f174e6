package opentravel

import (
	"context"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	var l limiter
	done, cancel := context.WithCancel(context.Background())
	cancel() // acquire with an ended context only takes a free slot: a try
	lim := Limits{Concurrent: 1, RequestsPerMinute: 2, Window: time.Hour}
	rel, err := l.acquire(context.Background(), "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(done, "k", lim); err == nil {
		t.Fatal("a second request at once")
	}
	if r, err := l.acquire(done, "other", lim); err != nil {
		t.Fatal("another connection waited")
	} else {
		r(false)
	}
	// a waiting request goes once the first is answered
	got := make(chan func(bool), 1)
	go func() {
		r, err := l.acquire(context.Background(), "k", lim)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	rel(true)
	var rel2 func(bool)
	select {
	case rel2 = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting request was not let go")
	}
	rel2(true)
	// two answered within the window: a third waits
	if _, err := l.acquire(done, "k", lim); err == nil {
		t.Fatal("a third request within the minute")
	}
	// a request not sent does not count
	lim2 := Limits{RequestsPerMinute: 1, Window: time.Hour}
	r, err := l.acquire(context.Background(), "k2", lim2)
	if err != nil {
		t.Fatal(err)
	}
	r(false)
	if r, err = l.acquire(done, "k2", lim2); err != nil {
		t.Fatal("an unsent request was counted")
	}
	r(true)
	if _, err := l.acquire(done, "k2", lim2); err == nil {
		t.Fatal("a sent request was not counted")
	}
}
