package booking

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/pricing"
)

// MaxBlockNights bounds one block.
const MaxBlockNights = 731

func parseOwner(owner string) (string, int64, error) {
	kind, id, ok := strings.Cut(owner, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil {
		return "", 0, fmt.Errorf("owner %q", owner)
	}
	return kind, n, nil
}

// BlockNights are the nights a block holds: start to end, both included.
func BlockNights(start, end string) []string {
	s, _ := pricing.ParseDate(start)
	e, _ := pricing.ParseDate(end)
	return nights(s, e.AddDays(1))
}

// BlockRequest blocks the nights from Start to End (both included) of a property found by
// internal code.
type BlockRequest struct {
	InternalCode string
	Start, End   pricing.Date
	Memo         string
}

// CreateBlock holds the nights of a block in the same ledger as bookings: a night already
// booked or blocked answers UnavailableError.
func (s *Service) CreateBlock(ctx context.Context, account string, r BlockRequest) (Block, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	p, err := s.propertyView.PropertyByCode(ctx, account, r.InternalCode)
	if err != nil {
		return Block{}, err
	}
	id, err := s.blocks.NextBlockID(ctx)
	if err != nil {
		return Block{}, err
	}
	owner := BlockOwner(id)
	stay := ledger.Stay{Account: account, PropertyID: p.PropertyID, Dates: nights(r.Start, r.End.AddDays(1))}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Claim: []ledger.Stay{stay}}); err != nil {
		return Block{}, err
	}
	if err := s.ledger.Claim(ctx, stay, owner); err != nil {
		var te *ledger.TakenError
		if errors.As(err, &te) {
			_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
			return Block{}, &UnavailableError{Date: te.Date}
		}
		return Block{}, err
	}
	b, err := s.blocks.InsertBlock(ctx, Block{AccountID: account, BlockID: id, PropertyID: p.PropertyID,
		StartDate: r.Start.String(), EndDate: r.End.String(), Memo: r.Memo})
	if err != nil {
		return b, err
	}
	_ = s.ledger.End(ctx, account, owner)
	return b, nil
}

// ErrImportedBlock: a block imported from an iCal feed follows its feed; only a sync of the
// feed changes or removes it.
var ErrImportedBlock = errors.New("the block was imported from an iCal feed")

// DeleteBlock removes an owner's block of account and frees its nights; an imported block is
// ErrImportedBlock while its feed lives (a tombstoned feed's block is the owner's to remove:
// no sync of the feed will ever touch it again).
func (s *Service) DeleteBlock(ctx context.Context, account string, id int64) error {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	b, err := s.blocks.Block(ctx, account, id)
	if err != nil {
		return err // ErrNotFound too
	}
	if b.FeedID != 0 {
		gone, err := s.blocks.FeedGone(ctx, account, b.FeedID)
		if err != nil {
			return err
		}
		if !gone {
			return ErrImportedBlock
		}
	}
	owner := BlockOwner(id)
	release := ledger.Stay{Account: account, PropertyID: b.PropertyID, Dates: BlockNights(b.StartDate, b.EndDate)}
	if err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account, Release: []ledger.Stay{release}}); err != nil {
		if errors.Is(err, ledger.ErrBusy) {
			return ErrBusy
		}
		return err
	}
	// Read again with the op held: a delete that completed in between has freed the nights.
	if _, err := s.blocks.Block(ctx, account, id); err != nil {
		_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
		return err
	}
	if _, err := s.blocks.DeleteBlock(ctx, account, id); err != nil {
		return err
	}
	if err := s.ledger.Release(ctx, release, owner); err == nil {
		_ = s.ledger.End(ctx, account, owner)
	}
	return nil
}
