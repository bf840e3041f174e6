package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/pricing"
)

// ErrInvalid marks a source whose postings cannot be computed (an amount that is no
// decimal): retrying does not help.
var ErrInvalid = errors.New("journal: invalid source")

// Bookings reads a booking of an account in any status (the booking store).
type Bookings interface {
	Booking(ctx context.Context, account string, id int64) (booking.Booking, error)
}

// BookingSource is the source of a booking's entries.
func BookingSource(id int64) string { return "booking:" + strconv.FormatInt(id, 10) }

// BookingResolver answers what a booking should have posted now (docs/money.md, "The
// ledger"), with the agreement in force on each posting's date; a booking that does not
// exist posts nothing.
func BookingResolver(bookings Bookings, agreements Agreements) Resolver {
	if agreements == nil {
		agreements = NoAgreements{}
	}
	return func(ctx context.Context, account, source string) ([]Posting, error) {
		kind, ids, _ := strings.Cut(source, ":")
		id, err := strconv.ParseInt(ids, 10, 64)
		if kind != "booking" || err != nil {
			return nil, fmt.Errorf("%w: %q is no booking", ErrInvalid, source)
		}
		b, err := bookings.Booking(ctx, account, id)
		if errors.Is(err, booking.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return BookingPostings(ctx, b, agreements)
	}
}

// Scale is the currency's minor digits, as the booking's amounts were priced with
// (pricing.Scale).
func Scale(code string) int32 { return pricing.Scale(code) }

// Day is the UTC day of t.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// bookingPostings collects the postings of one booking.
type bookingPostings struct {
	ctx        context.Context
	b          booking.Booking
	agreements Agreements
	out        []Posting
	err        error
}

func (bp *bookingPostings) amount(s, what string) decimal.Decimal {
	if s == "" {
		return decimal.Zero
	}
	d, err := decimal.NewFromString(s)
	if err != nil && bp.err == nil {
		bp.err = fmt.Errorf("%w: booking %d: %s %q is no decimal", ErrInvalid, bp.b.BookingID, what, s)
	}
	return d
}

func (bp *bookingPostings) post(date, cur, account string, owner int64, amount decimal.Decimal, line, label string) {
	if amount.IsZero() {
		return
	}
	bp.out = append(bp.out, Posting{Date: date, Currency: cur, Account: account, Amount: amount, OwnerID: owner,
		PropertyID: bp.b.PropertyID, BookingID: bp.b.BookingID, Line: line, Label: label})
}

// agreement is the agreement in force on date (nil: the account's own property).
func (bp *bookingPostings) agreement(date string) *Agreement {
	if bp.err != nil {
		return nil
	}
	a, err := bp.agreements.AgreementOn(bp.ctx, bp.b.AccountID, bp.b.PropertyID, date)
	if err != nil {
		bp.err = fmt.Errorf("agreement of property %d on %s: %w", bp.b.PropertyID, date, err)
	}
	return a
}

// revenue posts amount (signed as the owner's side: negative is owed to the owner) to the
// owner of the agreement, or to rental_income without one.
func (bp *bookingPostings) revenue(a *Agreement, date, cur string, amount decimal.Decimal, line, label string) {
	if a != nil {
		bp.post(date, cur, Owner, a.OwnerID, amount, line, label)
	} else {
		bp.post(date, cur, RentalIncome, 0, amount, line, label)
	}
}

// both posts amount to guest_funds and its opposite as revenue: one balanced line.
func (bp *bookingPostings) earned(a *Agreement, date, cur string, amount decimal.Decimal, line, label string) {
	bp.post(date, cur, GuestFunds, 0, amount, line, label)
	bp.revenue(a, date, cur, amount.Neg(), line, label)
}

// commission posts the manager's commission on basis under a: owner +C, management_income
// −C, C rounded once, half away from zero, to the currency's digits.
func (bp *bookingPostings) commission(a *Agreement, date, cur string, basis decimal.Decimal, label string) {
	if a == nil || a.CommissionPercent.IsZero() {
		return
	}
	c := basis.Mul(a.CommissionPercent).Div(decimal.NewFromInt(100)).Round(Scale(cur))
	bp.post(date, cur, Owner, a.OwnerID, c, LineCommission, label)
	bp.post(date, cur, ManagementIncome, 0, c.Neg(), LineCommission, label)
}

// BookingPostings is what b should have posted, as it is now (docs/money.md, "The ledger"):
// its payments, refunds and captured deposits on their days; a reserved booking's stay
// earned on its check-out day, with the channel's and the manager's commissions; a cancelled
// booking's kept amount on its cancellation day. Pending, held and failed bookings post
// nothing.
func BookingPostings(ctx context.Context, b booking.Booking, agreements Agreements) ([]Posting, error) {
	if b.Status != booking.StatusReserved && b.Status != booking.StatusCancelled {
		return nil, nil
	}
	if agreements == nil {
		agreements = NoAgreements{}
	}
	bp := &bookingPostings{ctx: ctx, b: b, agreements: agreements}
	cur := b.Quote.Currency

	ids := make([]int64, 0, len(b.Payments))
	for id := range b.Payments {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	netPaid := decimal.Zero
	for _, id := range ids {
		p := b.Payments[id]
		amt := bp.amount(p.Amount, "payment amount")
		pc := cmp.Or(p.Currency, cur)
		when := p.Time
		if when.IsZero() {
			when = p.CreatedAt
		}
		date, label := Day(when), "payment "+strconv.FormatInt(id, 10)
		switch p.Kind {
		case booking.KindDepositCapture:
			bp.post(date, pc, Cash, 0, amt, LineDepositCapture, label)
			bp.revenue(bp.agreement(date), date, pc, amt.Neg(), LineDepositCapture, label)
		case booking.KindRefund:
			bp.post(date, pc, Cash, 0, amt, LineRefund, label)
			bp.post(date, pc, GuestFunds, 0, amt.Neg(), LineRefund, label)
		default:
			bp.post(date, pc, Cash, 0, amt, LinePayment, label)
			bp.post(date, pc, GuestFunds, 0, amt.Neg(), LinePayment, label)
		}
		if p.Kind != booking.KindDepositCapture && pc == cur {
			netPaid = netPaid.Add(amt)
		}
	}

	switch b.Status {
	case booking.StatusReserved:
		bp.stay(cur)
	case booking.StatusCancelled:
		bp.cancellation(cur, netPaid)
	}
	if bp.err != nil {
		return nil, bp.err
	}
	return bp.out, nil
}

// stay posts a reserved booking's stay, earned on its check-out day.
func (bp *bookingPostings) stay(cur string) {
	b, q := bp.b, bp.b.Quote
	date := b.Checkout
	a := bp.agreement(date)
	rent := bp.amount(q.TotalRent, "total rent")
	bp.earned(a, date, cur, rent, LineRent, "")

	discounts := decimal.Zero
	for _, d := range q.Discounts {
		amt := bp.amount(d.Amount, "discount")
		discounts = discounts.Add(amt)
		bp.earned(a, date, cur, amt.Neg(), LineDiscount, d.Name)
	}
	if rest := bp.amount(q.DiscountTotal, "discount total").Sub(discounts); !rest.IsZero() {
		discounts = discounts.Add(rest)
		bp.earned(a, date, cur, rest.Neg(), LineDiscount, "")
	}

	services, taxes, serviceTotal := decimal.Zero, decimal.Zero, decimal.Zero
	for _, s := range q.Services {
		amt, tax := bp.amount(s.Amount, "service"), bp.amount(s.TaxAmount, "service tax")
		services, taxes, serviceTotal = services.Add(amt), taxes.Add(tax), serviceTotal.Add(amt).Add(tax)
		bp.earned(a, date, cur, amt, LineService, s.Name)
		bp.post(date, cur, GuestFunds, 0, tax, LineTax, s.Name)
		bp.post(date, cur, TaxPayable, 0, tax.Neg(), LineTax, s.Name)
	}
	if rest := bp.amount(q.ServiceTotal, "service total").Sub(serviceTotal); !rest.IsZero() {
		services = services.Add(rest)
		bp.earned(a, date, cur, rest, LineService, "")
	}
	taxTotal := decimal.Zero
	for _, t := range q.Taxes {
		amt := bp.amount(t.Amount, "tax")
		taxTotal = taxTotal.Add(amt)
		bp.post(date, cur, GuestFunds, 0, amt, LineTax, t.Name)
		bp.post(date, cur, TaxPayable, 0, amt.Neg(), LineTax, t.Name)
	}
	if rest := bp.amount(q.TaxTotal, "tax total").Sub(taxTotal); !rest.IsZero() {
		taxTotal = taxTotal.Add(rest)
		bp.post(date, cur, GuestFunds, 0, rest, LineTax, "")
		bp.post(date, cur, TaxPayable, 0, rest.Neg(), LineTax, "")
	}
	taxes = taxes.Add(taxTotal)

	// The channel kept its commission of the guest's money: the owner bears it.
	if k := bp.amount(b.ChannelCommission, "channel commission"); !k.IsZero() {
		label := b.Channel
		bp.post(date, cur, GuestFunds, 0, k.Neg(), LineChannelCommission, label)
		bp.revenue(a, date, cur, k, LineChannelCommission, label)
	}

	if a != nil {
		var basis decimal.Decimal
		switch a.Basis {
		case BasisTotal:
			basis = rent.Sub(discounts).Add(services).Add(taxes)
		case BasisComponents:
			for _, c := range a.Components {
				switch c {
				case ComponentRent:
					basis = basis.Add(rent)
				case ComponentDiscounts:
					basis = basis.Sub(discounts)
				case ComponentServices:
					basis = basis.Add(services)
				case ComponentTaxes:
					basis = basis.Add(taxes)
				}
			}
		default: // BasisRent
			basis = rent.Sub(discounts)
		}
		bp.commission(a, date, cur, basis, "")
	}
}

// cancellation posts what a cancelled booking keeps of what was paid: net paid less the
// refund decided (all of it when no refund was decided), on the cancellation day.
func (bp *bookingPostings) cancellation(cur string, netPaid decimal.Decimal) {
	b := bp.b
	var when time.Time
	switch {
	case b.CancelledAt != nil:
		when = *b.CancelledAt
	case b.Refund != nil && !b.Refund.DecidedAt.IsZero():
		when = b.Refund.DecidedAt
	default:
		when = b.UpdatedAt
	}
	date := Day(when)
	kept := netPaid
	if r := b.Refund; r != nil {
		kept = bp.amount(r.NetPaid, "net paid").Sub(bp.amount(r.Amount, "refund amount"))
	}
	if kept.IsZero() {
		return
	}
	a := bp.agreement(date)
	bp.earned(a, date, cur, kept, LineCancellationFee, "")
	if a != nil && (a.Basis != BasisComponents || slices.Contains(a.Components, ComponentRent)) {
		bp.commission(a, date, cur, kept, LineCancellationFee)
	}
}
