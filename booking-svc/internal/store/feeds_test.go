package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// TestFeedLeaseTakeoverHasOneWinner: many syncs (as of several replicas) find one feed's
// lease expired at the same moment and try to take it over: exactly one gets it, with the
// blocks the stopped holder noted, and those notes stay in the lease for whoever comes next.
func TestFeedLeaseTakeoverHasOneWinner(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	s.StoppedFeedLease = 10 * time.Millisecond // what the next holder waits for below
	for round := range 5 {
		account := fresh("feedlease")
		const feed = 5
		// A holder that stopped: its lease is up, and it noted blocks 1..3.
		if _, err := s.TakeFeedLease(ctx, account, feed, "dead", time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		for id := range int64(3) {
			if err := s.NoteFeedBlock(ctx, account, feed, "dead", id+1); err != nil {
				t.Fatal(err)
			}
		}
		const takers = 24
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, takers)
		lefts := make([][]int64, takers)
		for i := range takers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				lefts[i], errs[i] = s.TakeFeedLease(ctx, account, feed, fmt.Sprintf("taker-%d", i), time.Now().Add(time.Hour))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("round %d: taker-%d and taker-%d both took the lease over", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, booking.ErrBusy):
				t.Errorf("round %d: taker-%d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody took the lease over", round)
		}
		if got := lefts[winner]; !slices.Equal(got, []int64{1, 2, 3}) {
			t.Errorf("round %d: the winner was left %v, want [1 2 3]", round, got)
		}
		// Only the winner can note; a loser's note is refused.
		for i := range takers {
			err := s.NoteFeedBlock(ctx, account, feed, fmt.Sprintf("taker-%d", i), 10+int64(i))
			if (i == winner) != (err == nil) {
				t.Errorf("round %d: note of taker-%d (winner %d): %v", round, i, winner, err)
			}
		}
		// The winner stops too: the next holder is left the dead holder's blocks and its own.
		if err := s.EndFeedLease(ctx, account, feed, fmt.Sprintf("taker-%d", winner), false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * s.StoppedFeedLease) // the stopped lease is up (its end is a time)
		left, err := s.TakeFeedLease(ctx, account, feed, "next", time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(left)
		if want := []int64{1, 2, 3, 10 + int64(winner)}; !slices.Equal(left, want) {
			t.Errorf("round %d: the next holder was left %v, want %v", round, left, want)
		}
		if err := s.EndFeedLease(ctx, account, feed, "next", true); err != nil {
			t.Fatal(err)
		}
		if left, err := s.TakeFeedLease(ctx, account, feed, "fresh", time.Now().Add(time.Hour)); err != nil || len(left) != 0 {
			t.Errorf("round %d: after a finished sync: %v, %v", round, left, err)
		}
	}
}
