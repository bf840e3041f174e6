package booking

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/ledger"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
)

// Promotion is a promotion code of an account (contract.Promotion), as a booking keeps it:
// the terms it was booked with (a later change of the account's promotion does not re-price
// it) and which use of the code's usage limit it holds.
type Promotion struct {
	Code       string // as the account spells it
	Name       string
	Percent    bool            // Amount percent off the rent; otherwise Amount off it, in the account's currency
	Amount     decimal.Decimal // percent or money
	StartDate  string          // first check-in day, YYYY-MM-DD
	EndDate    string          // last check-in day; "" open-ended
	MinNights  int             // 0: any stay
	UsageLimit int             // bookings that may use it at once; 0: no limit
	Properties []int64         // empty: every property
	// Slot is the use the booking holds, 1…UsageLimit; 0 for a code without a limit.
	Slot int
}

// promotionField is the request field a promotion error names.
const promotionField = "promotionCode"

func promotionError(format string, args ...any) *FieldError {
	return &FieldError{Field: promotionField, Message: fmt.Sprintf(format, args...)}
}

// findPromotion returns the account's promotion of code (compared case-insensitively).
func findPromotion(st Settings, code string) (Promotion, error) {
	for _, p := range st.Promotions {
		if strings.EqualFold(p.Code, code) {
			return p, nil
		}
	}
	return Promotion{}, promotionError("%s is not a promotion code of this account", code)
}

// check reports whether the promotion applies to a stay: its check-in within [StartDate,
// EndDate], at least MinNights nights, a property it is valid for. Uses are judged apart.
func (p Promotion) check(pid int64, checkin, checkout pricing.Date) error {
	in := checkin.String()
	switch {
	case p.StartDate != "" && in < p.StartDate:
		return promotionError("%s is not valid yet: it applies to check-ins from %s", p.Code, p.StartDate)
	case p.EndDate != "" && in > p.EndDate:
		return promotionError("%s has expired: it applied to check-ins up to %s", p.Code, p.EndDate)
	case p.MinNights > 0 && pricing.DaysBetween(checkin, checkout) < p.MinNights:
		return promotionError("%s applies to stays of at least %d nights", p.Code, p.MinNights)
	case len(p.Properties) > 0 && !slices.Contains(p.Properties, pid):
		return promotionError("%s does not apply to this property", p.Code)
	}
	return nil
}

// engine is the promotion as the pricing engine applies it.
func (p *Promotion) engine() *pricing.Promotion {
	if p == nil {
		return nil
	}
	return &pricing.Promotion{Code: p.Code, Name: p.Name, Percent: p.Percent, Amount: p.Amount}
}

func (p Promotion) usedUp() error {
	return promotionError("%s has been used up: its limit of %d %s is reached", p.Code, p.UsageLimit,
		map[bool]string{true: "booking", false: "bookings"}[p.UsageLimit == 1])
}

// The uses of a code with a usage limit are held in the ledger, like nights: use n of code
// C is the ledger entry "promotion:C:n" of the account (property 0, which no property has),
// so MongoDB's unique _id lets exactly one booking hold it, and the same op, janitor and
// retry machinery that repairs unfinished night claims gives back a use taken by a change
// that stopped (docs/booking.md, "Promotion codes").
const usePropertyID = 0

func useDate(code string, n int) string {
	return "promotion:" + strings.ToUpper(code) + ":" + strconv.Itoa(n)
}

// useStay is the use a booking holds (none for a code without a limit or no promotion).
func useStay(account string, p *Promotion) ledger.Stay {
	s := ledger.Stay{Account: account, PropertyID: usePropertyID}
	if p != nil && p.Slot > 0 {
		s.Dates = []string{useDate(p.Code, p.Slot)}
	}
	return s
}

// candidateUses are all the uses of a limited code: an op lists them all among the entries
// it may claim, so that whichever one a stopped change took is given back by the repair.
func candidateUses(account string, p *Promotion) ledger.Stay {
	s := ledger.Stay{Account: account, PropertyID: usePropertyID}
	if p != nil && p.UsageLimit > 0 && p.Slot == 0 {
		for n := 1; n <= p.UsageLimit; n++ {
			s.Dates = append(s.Dates, useDate(p.Code, n))
		}
	}
	return s
}

// MaxUsageLimit is the largest usage limit booking-svc counts: a create's op lists every use
// of the code (so that a stopped create's use is given back), and a full code is known only
// once every use was tried. property-svc refuses a larger one; a code stored before that
// rule is refused when used, clearly, rather than counted approximately (docs/booking.md).
const MaxUsageLimit = contract.MaxUsageLimit

// uses are the use numbers of p in the order a request tries them: from a random one on,
// so that concurrent creates spread over the free uses instead of all colliding on the first.
func uses(p *Promotion) []int {
	out := make([]int, p.UsageLimit)
	start := rand.IntN(p.UsageLimit)
	for i := range out {
		out[i] = (start+i)%p.UsageLimit + 1
	}
	return out
}

// takeUse claims a free use of p for owner and records it in p.Slot; a code without a limit
// takes none. All uses held: the code is used up.
func (s *Service) takeUse(ctx context.Context, account string, p *Promotion, owner string) error {
	if p == nil || p.UsageLimit == 0 || p.Slot > 0 {
		return nil
	}
	for _, n := range uses(p) {
		err := s.ledger.Claim(ctx, ledger.Stay{Account: account, PropertyID: usePropertyID, Dates: []string{useDate(p.Code, n)}}, owner)
		if err == nil {
			p.Slot = n
			return nil
		}
		if !ledger.IsTaken(err) {
			return err
		}
	}
	return p.usedUp()
}

// checkUsesLeft answers the used-up error when every use of p is held (a quote takes none).
func (s *Service) checkUsesLeft(ctx context.Context, account string, p *Promotion) error {
	if p == nil || p.UsageLimit == 0 || p.Slot > 0 {
		return nil
	}
	for _, n := range uses(p) {
		o, err := s.ledger.Owner(ctx, account, usePropertyID, useDate(p.Code, n))
		if err != nil {
			return err
		}
		if o == "" {
			return nil
		}
	}
	return p.usedUp()
}

// promotionFor resolves the promotion a request asks for: none for "", the booking's own
// (its booked terms and its use) when the code is the one it holds, otherwise the account's
// current promotion of that code. It is checked against the stay.
func promotionFor(st Settings, code string, held *Promotion, pid int64, checkin, checkout pricing.Date) (*Promotion, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, nil
	}
	var p Promotion
	if held != nil && strings.EqualFold(held.Code, code) {
		p = *held
	} else {
		var err error
		if p, err = findPromotion(st, code); err != nil {
			return nil, err
		}
		p.Slot = 0
	}
	if err := p.check(pid, checkin, checkout); err != nil {
		return nil, err
	}
	if p.UsageLimit > MaxUsageLimit && p.Slot == 0 {
		return nil, promotionError("%s cannot be used: its usage limit of %d is above the %d bookings this service counts; "+
			"the owner can lower it (or set none)", p.Code, p.UsageLimit, MaxUsageLimit)
	}
	return &p, nil
}

// DiscountTexts are the discount lines of a priced stay as a guest reads them.
func DiscountTexts(r pricing.Result) []string {
	out := make([]string, 0, len(r.Discounts))
	for _, d := range r.Discounts {
		out = append(out, pricing.DiscountText(d, r.Currency, r.Scale))
	}
	return out
}
