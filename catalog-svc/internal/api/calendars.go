package api

import (
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/view"
	"github.com/vros/vros/libs/pricing"
)

// calendarCacheSize bounds the getcalendar answers kept: a year's answer is about 80 KB, so
// about 20 MB at most.
const calendarCacheSize = 256

// calendarKey names one getcalendar answer: a Property is never changed once published (an
// update or a repricing replaces the pointer), and the generation changes with every booking
// and block of the property, so equal keys are equal answers.
type calendarKey struct {
	p        *view.Property
	gen      uint64
	from, to pricing.Date
}

// calendars keeps getcalendar's encoded answers (the data array): websites and channels poll
// the same ranges far more often than the calendars change.
type calendars struct {
	c *lru.Cache[calendarKey, []byte]
}

func newCalendars() calendars {
	c, err := lru.New[calendarKey, []byte](calendarCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return calendars{c: c}
}

func (c calendars) get(k calendarKey) ([]byte, bool) { return c.c.Get(k) }
func (c calendars) put(k calendarKey, data []byte)   { c.c.Add(k, data) }

// Forget drops an erased account's answers.
func (c calendars) Forget(acc string) { forget(c.c, acc) }

func (k calendarKey) account() string { return k.p.Snap.AccountID }

// forget removes from c every entry whose key is of account acc.
func forget[K interface {
	comparable
	account() string
}, V any](c *lru.Cache[K, V], acc string) {
	for _, k := range c.Keys() {
		if k.account() == acc {
			c.Remove(k)
		}
	}
}

// spanCacheSize bounds the price spans kept: one per property and day, a few dozen bytes.
const spanCacheSize = 1 << 16

// span is a property's lowest and highest one-night price over the 365 nights from a day
// (found: it has a price on the first of them).
type span struct {
	lo, hi decimal.Decimal
	found  bool
}

type spanKey struct {
	p     *view.Property
	today pricing.Date
}

// spans keeps each property's price span per day: property-detail, get-min-max-price-property
// and default-config read it, and computing it prices 365 nights (an account-wide read, every
// live property's).
type spans struct{ c *lru.Cache[spanKey, span] }

func newSpans() spans {
	c, err := lru.New[spanKey, span](spanCacheSize)
	if err != nil {
		panic(err)
	}
	return spans{c: c}
}

// of is p's span from today, computed once per property value and day.
func (s spans) of(p *view.Property, today pricing.Date) span {
	k := spanKey{p: p, today: today}
	if sp, ok := s.c.Get(k); ok {
		return sp
	}
	var sp span
	for i := 0; i < 365; i++ {
		n, ok := pricing.NightPrice(p.Pricing, today.AddDays(i), 1)
		if !ok {
			break
		}
		if !sp.found || n.Price.LessThan(sp.lo) {
			sp.lo = n.Price
		}
		if !sp.found || n.Price.GreaterThan(sp.hi) {
			sp.hi = n.Price
		}
		sp.found = true
	}
	s.c.Add(k, sp)
	return sp
}

// Forget drops an erased account's spans.
func (s spans) Forget(acc string) { forget(s.c, acc) }

func (k spanKey) account() string { return k.p.Snap.AccountID }
