package api

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/pricing"
)

// calendarCacheSize bounds the getcalendar answers kept: a year's answer is about 120 KB, so
// about 30 MB at most.
const calendarCacheSize = 256

// calendarKey names one getcalendar answer: a Property is never changed once published (an
// update, a repricing, new plans or restrictions replace the pointer), and the generation
// changes with every booking and block of the property, so equal keys (plan and dates
// included) are equal answers.
type calendarKey struct {
	p        *catalog.Property
	gen      uint64
	plan     int64
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
func (c calendars) Forget(acc string) {
	for _, k := range c.c.Keys() {
		if k.p.Snap.AccountID == acc {
			c.c.Remove(k)
		}
	}
}
