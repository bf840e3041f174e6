package feedsync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// feedLeaseMargin is how long past a sync's deadline its feed lease lasts: once it is up,
// the sync's writes have surely stopped and another sync repairs what it left.
const feedLeaseMargin = 5 * time.Second

// feedRetryGap is the wait between two tries of a sync that finds its feed's lease taken.
const feedRetryGap = 50 * time.Millisecond

func leaseHolder() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// takeFeedLease waits its turn for the feed's lease, then repairs what earlier holders left.
// It reports whether it took the lease (the caller gives it up, even after an error).
func (s *Syncer) takeFeedLease(ctx context.Context, account string, feed int64, holder string) (bool, error) {
	dl, _ := ctx.Deadline()
	for {
		left, err := s.blocks.TakeFeedLease(ctx, account, feed, holder, dl.Add(s.LeaseMargin))
		if err != nil && ctx.Err() != nil {
			return false, booking.ErrBusy // waited out its time for the lease (the lease's own lock too)
		}
		if errors.Is(err, booking.ErrBusy) {
			select {
			case <-ctx.Done():
				return false, booking.ErrBusy
			case <-time.After(feedRetryGap):
				continue
			}
		}
		if err != nil {
			return false, err
		}
		// The taken-over lease keeps these notes until this sync ends done.
		for _, id := range left {
			if _, err := s.ledger.RepairStopped(ctx, account, booking.BlockOwner(id), s.current); err != nil {
				return true, fmt.Errorf("repair block %d of feed %d: %w", id, feed, err)
			}
		}
		return true, nil
	}
}
