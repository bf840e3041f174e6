package bookingsvc

import "encoding/json"

// Booking is what messaging-svc reads of booking-svc's booking object (interface B's, without
// the card: docs/booking.md, "Integrations"). Amounts are decimal strings in Currency, dates
// YYYY-MM-DD and times in the property's zone.
type Booking struct {
	BookingID  int64  `json:"bookingId"`
	Status     string `json:"status"` // reserved, cancelled
	FirstName  string `json:"firstName"`
	LastName   string `json:"lastName"`
	FullName   string `json:"fullName"`
	Email      string `json:"email"`
	Phone1     string `json:"phone1"`
	Phone2     string `json:"phone2"`
	BrandID    int64  `json:"brandId"`
	PropertyID int64  `json:"propertyId"`
	// PropertyName is the property's name as booked (the property view's is preferred).
	PropertyName string `json:"propertyName"`
	// Checkin and Checkout are "YYYY-MM-DD HH:MM" (the day and the property's time).
	Checkin         string        `json:"checkin"`
	Checkout        string        `json:"checkout"`
	Nights          int           `json:"qtyofnights"`
	Adults          int           `json:"numberofadults"`
	Children        int           `json:"numberofchildren"`
	Currency        string        `json:"currency"`
	TotalRent       json.Number   `json:"totalRent"`
	GrandTotal      json.Number   `json:"grandTotal"`
	AmountPaid      json.Number   `json:"amountPaid"`
	Payments        []Payment     `json:"payments"`
	PaymentSchedule []Installment `json:"paymentSchedule"`
	RatePlanName    *string       `json:"ratePlanName"`
	Channel         *string       `json:"channel"`
	Policy          *Policy       `json:"cancellationPolicy"`
	Refund          *Refund       `json:"refund"`
	Deposit         *Deposit      `json:"depositHold"`
}

// Payment is one payment recorded on the booking; Kind is "" for a payment received,
// refund, or deposit_capture.
type Payment struct {
	PaymentID string      `json:"paymentId"`
	Amount    json.Number `json:"amount"`
	Time      string      `json:"time"` // "YYYY-MM-DD HH:MM:SS"
	Method    string      `json:"method"`
	Kind      string      `json:"kind"`
}

// Installment is one due date of the booking's payment schedule.
type Installment struct {
	DueDate string      `json:"dueDate"`
	Amount  json.Number `json:"amount"`
}

// Policy is the cancellation policy booked.
type Policy struct {
	Policy string `json:"policy"`
	Tiers  []struct {
		DaysBefore int         `json:"days_before"`
		Percent    json.Number `json:"percent"`
	} `json:"tiers"`
}

// Refund is the refund the booking's cancellation decided.
type Refund struct {
	Status   string      `json:"status"`
	Policy   string      `json:"policy"`
	Percent  json.Number `json:"percent"`
	Amount   json.Number `json:"amount"`
	Refunded json.Number `json:"refunded"`
}

// Deposit is the damage-deposit hold.
type Deposit struct {
	Status         string       `json:"status"`
	Amount         json.Number  `json:"amount"`
	DueDate        string       `json:"dueDate"`
	ReleaseOn      string       `json:"releaseOn"`
	CapturedAmount *json.Number `json:"capturedAmount"`
}
