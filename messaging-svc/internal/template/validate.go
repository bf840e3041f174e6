package template

import (
	"context"
	"strings"

	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// Validate is the check a template passes before it is saved: a known trigger and language,
// a subject and an HTML body, each part parsing and running against a realistic sample
// booking (Sample) and against a bare one (no payments, refund, deposit or schedule), so that
// a template that reads a part a booking may lack without testing it is refused too. A
// refusal is a *FieldError naming the part, the line and Go's error.
func Validate(t Template) error {
	switch {
	case !IsTrigger(t.Trigger):
		return &FieldError{Field: FieldTrigger, Message: "must be one of " + strings.Join(triggers, ", ")}
	case !IsLanguage(t.Language):
		return &FieldError{Field: FieldLanguage, Message: "must be one of " + strings.Join(languages, ", ")}
	case strings.TrimSpace(t.Subject) == "":
		return &FieldError{Field: FieldSubject, Message: "is required"}
	case strings.TrimSpace(t.HTML) == "":
		return &FieldError{Field: FieldHTML, Message: "is required"}
	}
	c, err := compile(t)
	if err != nil {
		return err
	}
	for _, d := range []Data{Sample(t.Trigger, t.Language), bare(t.Trigger, t.Language)} {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		_, err := c.render(ctx, d)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// Sample is a realistic booking for a trigger, in a language: what Validate runs templates
// against, and what a preview shows when the account has no booking yet.
func Sample(trigName, lang string) Data {
	d := Data{
		Guest: Guest{FirstName: "Giulia", LastName: "Bianchi", FullName: "Giulia Bianchi", Email: "giulia.bianchi@example.com",
			Phone: "+39 333 123 4567", Language: lang},
		Booking: Booking{ID: 104233, Status: "reserved", Checkin: "2026-07-10", Checkout: "2026-07-17", Nights: 7, Adults: 2,
			Children: 1, Currency: "EUR", TotalRent: "1260.00", GrandTotal: "1452.50", AmountPaid: "435.75", BalanceDue: "1016.75",
			Payments: []Payment{{ID: 88001, Amount: "435.75", Date: "2026-03-02", Method: "card"}},
			Schedule: []Installment{{DueDate: "2026-03-02", Amount: "435.75", Paid: true}, {DueDate: "2026-06-10", Amount: "1016.75"}},
			Deposit:  Deposit{Status: "scheduled", Amount: "300.00", DueDate: "2026-07-08", ReleaseOn: "2026-07-24"},
			RatePlan: "Standard",
			CancellationPolicy: CancellationPolicy{Name: "moderate", Tiers: []CancellationTier{{DaysBefore: 30, Percent: "100"},
				{DaysBefore: 14, Percent: "50"}}},
		},
		Property: Property{Name: "Casa del Limone", Address: "Via Positanesi d'America 14", City: "Positano", Postcode: "84017",
			Country: "IT", CheckinTime: "15:00", CheckoutTime: "10:00", Timezone: "Europe/Rome"},
		Brand:   Brand{Name: "Amalfi Coast Villas", Website: "https://www.amalficoastvillas.example"},
		Account: Account{Name: "Amalfi Coast Villas srl"},
		Message: Message{Trigger: trigName, Language: lang, SentDate: "2026-03-02"},
	}
	switch trigName {
	case trigger.BookingCancelled, trigger.OwnerCancellation:
		d.Booking.Status = "cancelled"
		d.Booking.Refund = Refund{Status: "pending", Amount: "435.75", Refunded: "0.00", Policy: "moderate", Percent: "100"}
		d.Booking.Deposit = Deposit{}
		d.Booking.Schedule = d.Booking.Schedule[:1]
	case trigger.PaymentReceived:
		d.Message.Payment = d.Booking.Payments[0]
	case trigger.PaymentFailed:
		d.Message.Payment = Payment{Amount: "1016.75", Date: "2026-06-10", Method: "card"}
		d.Message.Installment = d.Booking.Schedule[1]
		d.Message.SentDate = "2026-06-10"
	case trigger.PaymentDueSoon:
		d.Message.Installment = d.Booking.Schedule[1]
		d.Message.SentDate = "2026-06-07"
	case trigger.DepositHeld:
		d.Booking.Deposit.Status = "held"
		d.Message.SentDate = "2026-07-08"
	case trigger.DepositReleased:
		d.Booking.Deposit.Status = "released"
		d.Message.SentDate = "2026-07-24"
	case trigger.StayArrival:
		d.Message.SentDate = "2026-07-07"
	case trigger.StayCheckout:
		d.Message.SentDate = "2026-07-16"
	case trigger.StayThanks:
		d.Message.SentDate = "2026-07-18"
	case trigger.OwnerChannelConflict:
		d.Booking.Channel = "airbnb"
		d.Message.Channel = "airbnb"
		d.Message.Reason = "the nights 2026-07-12 to 2026-07-14 are already booked (booking 104198)"
	}
	if trigName != trigger.PaymentFailed && trigName != trigger.PaymentDueSoon && trigName != trigger.BookingCancelled && trigName != trigger.OwnerCancellation {
		d.Booking.Schedule[1].Paid = trigName == trigger.StayArrival || trigName == trigger.StayCheckout || trigName == trigger.StayThanks ||
			trigName == trigger.DepositHeld || trigName == trigger.DepositReleased
		if d.Booking.Schedule[1].Paid {
			d.Booking.Payments = append(d.Booking.Payments, Payment{ID: 88342, Amount: "1016.75", Date: "2026-06-10", Method: "card"})
			d.Booking.AmountPaid, d.Booking.BalanceDue = "1452.50", "0.00"
		}
	}
	return d
}

// bare is Sample without the parts a booking may lack.
func bare(trigName, lang string) Data {
	d := Sample(trigName, lang)
	d.Booking.Payments, d.Booking.Schedule = nil, nil
	d.Booking.Refund, d.Booking.Deposit = Refund{}, Deposit{}
	d.Booking.CancellationPolicy.Tiers = nil
	d.Booking.Children = 0
	d.Guest.Phone = ""
	d.Brand.Website = ""
	return d
}
