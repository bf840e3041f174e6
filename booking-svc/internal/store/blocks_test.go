package store

import (
	"context"
	"errors"
	"testing"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// The contract of booking.Blocks, on the store the package's TestMain runs.

func insertBlock(t *testing.T, s booking.Blocks, account string) booking.Block {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextBlockID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.InsertBlock(ctx, booking.Block{AccountID: account, BlockID: id, PropertyID: 17, StartDate: "2027-09-01", EndDate: "2027-09-03", Memo: "painting"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBlockRoundTrip: a block reads back as inserted until deleted, then is ErrNotFound.
func TestBlockRoundTrip(t *testing.T) {
	ctx := context.Background()
	var s booking.Blocks = newStore(t)
	acc := fresh("bl")
	b := insertBlock(t, s, acc)
	if b.Version != 1 || b.CreatedAt.IsZero() || b.Deleted {
		t.Fatalf("InsertBlock: %+v", b)
	}
	want := booking.Block{AccountID: acc, BlockID: b.BlockID, PropertyID: 17, StartDate: "2027-09-01", EndDate: "2027-09-03", Memo: "painting",
		Version: 1, CreatedAt: b.CreatedAt}
	if got, err := s.Block(ctx, acc, b.BlockID); err != nil || got != want {
		t.Fatalf("Block: %+v, %v; want %+v", got, err, want)
	}
	del, err := s.DeleteBlock(ctx, acc, b.BlockID)
	want.Deleted, want.Version = true, 2
	if err != nil || del != want {
		t.Fatalf("DeleteBlock: %+v, %v; want %+v", del, err, want)
	}
	if _, err := s.Block(ctx, acc, b.BlockID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("Block after DeleteBlock: %v, want ErrNotFound", err)
	}
	// Another block of the account is untouched.
	other := insertBlock(t, s, acc)
	if got, err := s.Block(ctx, acc, other.BlockID); err != nil || got != other {
		t.Fatalf("Block of another block: %+v, %v; want %+v", got, err, other)
	}
}

// TestBlockOfAnotherAccount: a block is found, and deleted, only in its own account.
func TestBlockOfAnotherAccount(t *testing.T) {
	ctx := context.Background()
	var s booking.Blocks = newStore(t)
	owner, intruder := fresh("bx"), fresh("bx-other")
	b := insertBlock(t, s, owner)
	for _, tc := range []struct {
		name string
		call func(account string, id int64) error
	}{
		{"Block", func(a string, id int64) error { _, err := s.Block(ctx, a, id); return err }},
		{"DeleteBlock", func(a string, id int64) error { _, err := s.DeleteBlock(ctx, a, id); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				account string
				id      int64
			}{{intruder, b.BlockID}, {owner, 987654321}} {
				if err := tc.call(c.account, c.id); !errors.Is(err, booking.ErrNotFound) {
					t.Errorf("%s(%s, %d): %v, want ErrNotFound", tc.name, c.account, c.id, err)
				}
			}
		})
	}
	if got, err := s.Block(ctx, owner, b.BlockID); err != nil || got != b {
		t.Fatalf("the block changed: %+v, %v; was %+v", got, err, b)
	}
}
