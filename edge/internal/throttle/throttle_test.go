package throttle

import (
	"strconv"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	b := New(0.001, 3, 100)
	for i := range 3 {
		if !b.Allow("a") {
			t.Fatalf("call %d of a burst of 3 refused", i+1)
		}
	}
	if b.Allow("a") {
		t.Fatal("4th call of a burst of 3 allowed")
	}
	if !b.Allow("b") {
		t.Fatal("another key shares a's bucket")
	}
	if w := b.Wait("a"); w <= 0 {
		t.Errorf("Wait(a) = %v for an empty bucket", w)
	}
	if w := b.Wait("never-seen"); w != 0 {
		t.Errorf("Wait of an unknown key = %v", w)
	}
	before := b.Len()
	b.Wait("still-never-seen")
	if b.Len() != before {
		t.Error("Wait created a bucket")
	}
	for range 3 {
		b.Take("c")
	}
	if b.Wait("c") <= 0 {
		t.Error("three Takes from a burst of 3 left a token")
	}
}

// TestBucketsBounded: however many keys clients bring, at most size are kept.
func TestBucketsBounded(t *testing.T) {
	b := New(1, 1, 50)
	for i := range 10_000 {
		b.Take(strconv.Itoa(i))
	}
	if b.Len() != 50 {
		t.Errorf("%d keys kept, want 50", b.Len())
	}
}

func TestBucketsDisabled(t *testing.T) {
	b := New(0, 0, 10)
	for range 100 {
		if !b.Allow("a") {
			t.Fatal("a disabled limiter refused")
		}
		b.Take("a")
	}
	if b.Wait("a") != 0 || b.Len() != 0 {
		t.Error("a disabled limiter keeps buckets")
	}
}

// TestBucketsPlan: a key's own rate and burst replace the default, and a changed plan
// applies to the key's existing bucket at once.
func TestBucketsPlan(t *testing.T) {
	tests := []struct {
		name        string
		rps         float64 // default
		burst       int
		planRPS     float64
		planBurst   int
		wantAllowed int // of 20 calls at once
	}{
		{name: "default", rps: 0.001, burst: 3, wantAllowed: 3},
		{name: "plan burst", rps: 0.001, burst: 3, planBurst: 7, wantAllowed: 7},
		{name: "plan rate with the default burst", rps: 0.001, burst: 3, planRPS: 0.002, wantAllowed: 3},
		{name: "default off, plan on", rps: 0, burst: 0, planRPS: 0.001, planBurst: 2, wantAllowed: 2},
		{name: "default off, no plan", rps: 0, burst: 0, wantAllowed: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.rps, tt.burst, 100)
			n := 0
			for range 20 {
				if b.AllowPlan("a", tt.planRPS, tt.planBurst) {
					n++
				}
			}
			if n != tt.wantAllowed {
				t.Errorf("%d of 20 allowed, want %d", n, tt.wantAllowed)
			}
		})
	}
	t.Run("plan changed", func(t *testing.T) {
		b := New(0.001, 2, 100)
		for range 2 {
			b.AllowPlan("a", 0, 0)
		}
		if b.AllowPlan("a", 0, 0) {
			t.Fatal("3rd call of a burst of 2 allowed")
		}
		// A faster plan refills the same bucket at its rate from the first call under it.
		b.AllowPlan("a", 1000, 2)
		time.Sleep(5 * time.Millisecond)
		if !b.AllowPlan("a", 1000, 2) {
			t.Fatal("the bucket still refills at the old rate after the plan changed")
		}
		// Back to a slow plan with burst 1: the bucket holds at most 1 token now.
		time.Sleep(5 * time.Millisecond)
		n := 0
		for range 5 {
			if b.AllowPlan("a", 0.001, 1) {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d calls allowed after the burst went down to 1", n)
		}
	})
}
