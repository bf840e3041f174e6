package trigger

import (
	"errors"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestSettingsValidation(t *testing.T) {
	tests := []struct {
		name   string
		change Change
		field  string // "" accepted
	}{
		{"unknown trigger → trigger", Change{Trigger: "stay.arrivals", Enabled: ptr(false)}, "trigger"},
		{"days -1 → stay.arrival.days", Change{Trigger: StayArrival, Days: ptr(-1)}, "stay.arrival.days"},
		{"days 61 → stay.thanks.days", Change{Trigger: StayThanks, Days: ptr(61)}, "stay.thanks.days"},
		{"days 60 accepted", Change{Trigger: StayThanks, Days: ptr(60)}, ""},
		{"days 0 accepted (the day itself)", Change{Trigger: StayCheckout, Days: ptr(0)}, ""},
		{"time 24:00 → stay.arrival.time", Change{Trigger: StayArrival, At: ptr("24:00")}, "stay.arrival.time"},
		{"time 9:00 → stay.arrival.time (HH:MM)", Change{Trigger: StayArrival, At: ptr("9:00")}, "stay.arrival.time"},
		{"time 10:60 → payment.due_soon.time", Change{Trigger: PaymentDueSoon, At: ptr("10:60")}, "payment.due_soon.time"},
		{"time with spaces → stay.arrival.time", Change{Trigger: StayArrival, At: ptr(" 10:00")}, "stay.arrival.time"},
		{"days on an event trigger → booking.confirmed.days", Change{Trigger: BookingConfirmed, Days: ptr(2)}, "booking.confirmed.days"},
		{"time on an event trigger → owner.booking.time", Change{Trigger: OwnerBooking, At: ptr("10:00")}, "owner.booking.time"},
		{"time 23:59 accepted", Change{Trigger: StayArrival, At: ptr("23:59")}, ""},
		{"switched off accepted", Change{Trigger: PaymentReceived, Enabled: ptr(false)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Settings{}.With(tt.change)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a FieldError on %s", err, tt.field)
			}
			if s.For(tt.change.Trigger) != (Settings{}).For(tt.change.Trigger) {
				t.Error("a refused change was applied")
			}
		})
	}
}

func TestSettingsTwiceAndApplied(t *testing.T) {
	_, err := Settings{}.With(Change{Trigger: StayArrival, Days: ptr(5)}, Change{Trigger: StayArrival, Days: ptr(6)})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != StayArrival {
		t.Fatalf("twice: %v", err)
	}

	base, err := Settings{}.With(Change{Trigger: StayArrival, Days: ptr(5), At: ptr("09:30")},
		Change{Trigger: BookingConfirmed, Enabled: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if a := base.For(StayArrival); !a.Enabled || a.Days != 5 || a.At.String() != "09:30" {
		t.Errorf("stay.arrival = %+v", a)
	}
	if base.For(BookingConfirmed).Enabled {
		t.Error("booking.confirmed still on")
	}
	// A later change keeps what it does not name, and leaves the settings it came from alone.
	next, err := base.With(Change{Trigger: StayArrival, Enabled: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if a := next.For(StayArrival); a.Enabled || a.Days != 5 || a.At.String() != "09:30" {
		t.Errorf("after switching off: %+v", a)
	}
	if !base.For(StayArrival).Enabled {
		t.Error("With changed its receiver")
	}
	if (Settings{}).For("nope").Enabled {
		t.Error("an unknown trigger is on")
	}
}
