package api

import (
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
)

// get-property-related: the live properties like the one named (docs/catalog.md, "Website
// search"): same city or same type, maxguest within ±relatedGuests, and — when both have a
// price — a nightly "from" price within ±30 %, best matches first.
const (
	relatedGuests       = 2
	relatedDefaultLimit = 4
	relatedMaxLimit     = 20
)

var relatedPriceBand = decimal.NewFromFloat(0.3)

type relatedAnswer struct {
	PropertyRelated relatedList      `json:"property_related"`
	Properties      []searchProperty `json:"properties"`
}

type relatedList struct {
	Properties []searchProperty `json:"properties"`
}

// relatedHit is a candidate with its closeness: more shared traits first, then the
// smaller capacity and price differences.
type relatedHit struct {
	r         *searchRecord
	score     int
	guestDiff int
	unpriced  bool // one of the two has no price: compared after those that do
	priceDiff decimal.Decimal
}

func (a *API) propertyRelated(c *fiber.Ctx) error {
	in := readInput(c)
	limit := relatedDefaultLimit
	if n, ok := in.o.Int("limit", fields.Int{Min: 1, Max: relatedMaxLimit}); ok {
		limit = n
	}
	sc := a.readScope(c, in)
	p, err := a.readProperty(c, in, sc)
	if err != nil {
		return err
	}
	now := a.now()
	// p first, then the others: their records are built in one go.
	props := []*catalog.Property{p}
	collect := func(q *catalog.Property, _ catalog.Nights) {
		if q.Snap.PropertyID != p.Snap.PropertyID {
			props = append(props, q)
		}
	}
	a.scan(account(c), sc.list, collect)
	recs := a.recordsOf(account(c), props)
	me := recs[0]
	mine := me.fromPrice(now)
	band := mine.price.Mul(relatedPriceBand) // the price difference allowed
	var out []relatedHit
	for _, r := range recs[1:] {
		h := relatedHit{r: r}
		if me.city != "" && r.city == me.city {
			h.score += 2
		}
		if me.typ != "" && r.typ == me.typ {
			h.score++
		}
		if h.score == 0 {
			continue
		}
		if me.maxGuest > 0 && r.maxGuest > 0 {
			h.guestDiff = abs(r.maxGuest - me.maxGuest)
			if h.guestDiff > relatedGuests {
				continue
			}
		}
		theirs := r.fromPrice(now)
		if mine.ok && theirs.ok {
			h.priceDiff = theirs.price.Sub(mine.price).Abs()
			if h.priceDiff.GreaterThan(band) {
				continue
			}
		} else {
			h.unpriced = true
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := &out[i], &out[j]
		switch {
		case x.score != y.score:
			return x.score > y.score
		case x.guestDiff != y.guestDiff:
			return x.guestDiff < y.guestDiff
		case x.unpriced != y.unpriced:
			return y.unpriced
		case !x.priceDiff.Equal(y.priceDiff):
			return x.priceDiff.LessThan(y.priceDiff)
		case x.r.name != y.r.name:
			return strings.Compare(x.r.name, y.r.name) < 0
		}
		return x.r.pid < y.r.pid
	})
	if len(out) > limit {
		out = out[:limit]
	}
	base := a.mediaBase(c)
	q := &searchQuery{now: now}
	list := make([]searchProperty, 0, len(out))
	for _, h := range out {
		list = append(list, a.summary(hit{r: h.r}, q, base))
	}
	return c.JSON(relatedAnswer{PropertyRelated: relatedList{Properties: list}, Properties: list})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
