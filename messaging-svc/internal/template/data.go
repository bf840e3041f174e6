package template

// Data is what a template sees: plain values, no methods, so that a template can only read.
// Money amounts are decimal strings in the booking's currency ("1234.50"; format them with
// `money`), dates are YYYY-MM-DD in the property's zone (format them with `date`), times of
// day HH:MM. A part absent (no refund, no deposit, no payment) is its zero value, so a
// template tests it with `{{if .Booking.Refund.Status}}`. The exact list is in
// docs/messaging.md, "Variables".
type Data struct {
	Guest    Guest
	Booking  Booking
	Property Property
	Brand    Brand
	Account  Account
	Message  Message
}

// Guest is the booking's guest (read from booking-svc at send time).
type Guest struct {
	FirstName string
	LastName  string
	FullName  string
	Email     string
	Phone     string
	Language  string
}

// Booking is the booking a message is about.
type Booking struct {
	ID       int64
	Status   string // reserved or cancelled
	Checkin  string // the first night
	Checkout string // the day the guest leaves
	Nights   int
	Adults   int
	Children int
	Currency string
	// TotalRent is the nights' rent; GrandTotal rent, services and taxes; AmountPaid what
	// the payments add up to (refunds deducted); BalanceDue what is left to pay.
	TotalRent  string
	GrandTotal string
	AmountPaid string
	BalanceDue string
	Payments   []Payment
	// Schedule is the installments of the payment schedule, in due order.
	Schedule           []Installment
	Refund             Refund
	Deposit            Deposit
	RatePlan           string // the plan's name as booked ("Standard" for the standard plan)
	CancellationPolicy CancellationPolicy
	Channel            string // "" direct, else the channel (airbnb, booking.com, ...)
}

// Payment is one payment recorded on the booking.
type Payment struct {
	ID     int64
	Amount string
	Date   string
	Method string
	Kind   string // "" a payment received, refund, deposit_capture
}

// Installment is one due date of the payment schedule.
type Installment struct {
	DueDate string
	Amount  string
	Paid    bool
}

// Refund is what the booking's cancellation gives back: Status none, pending, succeeded or
// failed ("" when never cancelled); Amount the refund, Refunded what of it is back so far,
// Percent the policy's percentage it was computed with.
type Refund struct {
	Status   string
	Amount   string
	Refunded string
	Policy   string
	Percent  string
}

// Deposit is the damage-deposit hold on the guest's card: Status scheduled, held,
// released, captured, failed or no_card ("" when the booking has none).
type Deposit struct {
	Status         string
	Amount         string
	DueDate        string
	ReleaseOn      string
	CapturedAmount string
}

// CancellationPolicy is the policy booked: its name and its tiers, the most days first.
type CancellationPolicy struct {
	Name  string
	Tiers []CancellationTier
}

// CancellationTier: Percent of the grand total is refunded when the booking is cancelled
// DaysBefore days or more before arrival.
type CancellationTier struct {
	DaysBefore int
	Percent    string
}

// Property is what messages show of the property.
type Property struct {
	Name         string
	Address      string
	City         string
	Postcode     string
	Country      string
	CheckinTime  string // HH:MM
	CheckoutTime string // HH:MM
	Timezone     string // IANA zone
}

// Brand is the website the booking was made through (the account's name when none).
type Brand struct {
	Name    string
	Website string
}

// Account is the property manager's account.
type Account struct {
	Name string
}

// Message is the message itself: its trigger, language and the local date it is sent on,
// and what the trigger is about: the payment (payment.received, payment.failed), the
// installment (payment.due_soon), the channel and its reason (owner.channel_conflict).
type Message struct {
	Trigger     string
	Language    string
	SentDate    string
	Payment     Payment
	Installment Installment
	Channel     string
	Reason      string
}
