package throttle

import (
	"strconv"
	"testing"
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
