package property

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// What property-svc does for the operator on one whole account (docs/accounts.md, "Usage,
// export and erasure"): count its usage, export everything it holds of it, and erase it.

// ErrAccountErased refuses a write for an account that has been erased: its id stays
// erased for ever, so nothing of it can come back.
var ErrAccountErased = errors.New("account erased")

// LimitError refuses a create beyond the account plan's most properties.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("the account's plan allows at most %d properties", e.Max)
}

// Usage are the account's figures over a period [From, To), counted from the stored
// records.
type Usage struct {
	// Current counts the properties not deleted now; Created and Deleted those created and
	// deleted within the period.
	Current, Created, Deleted int64
	// Photos and PhotoBytes are what is stored now: the photos of the live properties and
	// the bytes of every rendition they keep.
	Photos, PhotoBytes int64
}

// Export is everything property-svc holds of an account but its photo images: one
// collection of records per kind, and the photos of its live properties, whose images go
// with it.
type Export struct {
	Collections []ExportCollection
	// Photos are the metadata of the live properties' photos, each by its media key, the
	// name of its image (Rendition), sorted by it.
	Photos []ExportRecord
}

// ExportCollection is one kind of record; each record is its JSON as the service documents
// it (docs/events.md), secrets left out.
type ExportCollection struct {
	Name    string
	Records []ExportRecord
}

// ExportRecord is one record and the id the export lists it by.
type ExportRecord struct {
	ID   string
	Data json.RawMessage
}

// Accounts is what the domain needs from storage for whole accounts.
type Accounts interface {
	// Usage counts the account's figures over [from, to).
	Usage(ctx context.Context, account string, from, to time.Time) (Usage, error)
	// Export reads every record of the account, deleted properties included.
	Export(ctx context.Context, account string) (Export, error)
	// Erase erases the account: a permanent marker first, then every record, photo and
	// claim of it, with a tombstone for every key it published and its erasure event
	// recorded in the outbox. A retry finishes an erasure that stopped half-way.
	Erase(ctx context.Context, account string) error
}

// Usage counts the account's usage over [from, to).
func (s *Properties) Usage(ctx context.Context, account string, from, to time.Time) (Usage, error) {
	u, err := s.repo.Usage(ctx, account, from, to)
	if err != nil {
		return Usage{}, fmt.Errorf("usage of account %s: %w", account, err)
	}
	return u, nil
}

// Export reads everything property-svc holds of the account but the photo images, which
// Rendition gives one by one (the photo.Original rendition is the stored source image).
func (s *Properties) Export(ctx context.Context, account string) (Export, error) {
	e, err := s.repo.Export(ctx, account)
	if err != nil {
		return Export{}, fmt.Errorf("export of account %s: %w", account, err)
	}
	return e, nil
}

// Erase erases the account (Accounts.Erase).
func (s *Properties) Erase(ctx context.Context, account string) error {
	if err := s.repo.Erase(ctx, account); err != nil {
		return fmt.Errorf("erase account %s: %w", account, err)
	}
	return nil
}
