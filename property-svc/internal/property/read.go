package property

import (
	"context"
	"fmt"
	"time"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/fields"
)

// The reads of /api/property (extension): get one property as its events carry it, and list
// the account's live properties a page at a time.

// Actions of A1 that read (extension).
const (
	Get  Action = "get"
	List Action = "list"
)

// propertyActionRule is A1's action: the writes of the spec and the reads of the extension.
var propertyActionRule = fields.Str{Required: true,
	OneOf: []string{string(Create), string(Update), string(Delete), string(Get), string(List)}}

// Bounds of A1 list (choices).
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
	maxListSearch    = 100
)

// ListQuery asks for one page of an account's live properties, sorted by internal code.
type ListQuery struct {
	Page  int // from 1
	Limit int // properties per page, 1 to MaxListLimit
	// Search, when not empty, keeps the properties whose internal code or name contains it,
	// ignoring case. It is matched as text, never as a pattern.
	Search string
}

// ListItem is what a list shows of one property.
type ListItem struct {
	PropertyID   int64
	InternalCode string
	Name         string
	Type         string
	City         string
	Country      string
	MaxGuest     int
	UpdatedAt    time.Time
}

// ListPage is one page of a list: Total counts every property the query selects, on any
// page.
type ListPage struct {
	Total       int64
	Page, Limit int
	Properties  []ListItem // never nil
}

// readListQuery reads list's members at the top level of the body: page (default 1), limit
// (default DefaultListLimit) and search. Blank or null members are not sent.
func readListQuery(o *fields.Object) ListQuery {
	q := ListQuery{Page: 1, Limit: DefaultListLimit}
	if n, ok := o.Int("page", fields.Int{Min: 1}); ok {
		q.Page = n
	}
	if n, ok := o.Int("limit", fields.Int{Min: 1, Max: MaxListLimit}); ok {
		q.Limit = n
	}
	q.Search, _ = o.String("search", fields.Str{Max: maxListSearch})
	return q
}

// Get returns the live property of account with internal code code as its events carry it
// (contract.Property: payment methods with their public values only); ErrNotFound when the
// account has none (deleted, or another account's).
func (s *Properties) Get(ctx context.Context, account, code string) (contract.Property, error) {
	p, err := s.repo.Read(ctx, account, code)
	if err != nil {
		return contract.Property{}, fmt.Errorf("get property %q: %w", code, err)
	}
	return p, nil
}

// List returns one page of the account's live properties, sorted by internal code.
func (s *Properties) List(ctx context.Context, account string, q ListQuery) (ListPage, error) {
	page, err := s.repo.List(ctx, account, q)
	if err != nil {
		return ListPage{}, fmt.Errorf("list properties: %w", err)
	}
	if page.Properties == nil {
		page.Properties = []ListItem{}
	}
	return page, nil
}
