package request_test

import (
	"testing"

	"github.com/vros/vros/booking-svc/internal/request"
)

const channelRule = "must be a channel name: 1 to 32 letters, digits, _ or -"

// planRows are the rules of ratePlanId and channel, the same on getinfo, create and update
// (docs/interface-b-fields.md, "Rate plans and channels").
func planRows() []row {
	return []row{
		tc("ratePlanId 0: the standard plan", "", set("ratePlanId", 0)),
		tc("ratePlanId 7", "", set("ratePlanId", 7)),
		tc("ratePlanId as a string", "", set("ratePlanId", "7")),
		tc("ratePlanId blank is not sent", "", set("ratePlanId", "")),
		tc("ratePlanId null is not sent", "", set("ratePlanId", nil)),
		tc("ratePlanId at the bound", "", set("ratePlanId", 2147483647)),
		tc("ratePlanId past the bound", "ratePlanId: must be between 0 and 2147483647", set("ratePlanId", 2147483648)),
		tc("ratePlanId negative", "ratePlanId: must be between 0 and 2147483647", set("ratePlanId", -1)),
		tc("ratePlanId a fraction", "ratePlanId: must be a whole number", set("ratePlanId", 1.5)),
		tc("ratePlanId text", "ratePlanId: must be a number", set("ratePlanId", "standard")),
		tc("ratePlanId a boolean", "ratePlanId: must be a number", set("ratePlanId", true)),

		tc("channel", "", set("channel", "airbnb")),
		tc("channel any case", "", set("channel", "BookingCom")),
		tc("channel with _ and -", "", set("channel", "vrbo_eu-2")),
		tc("channel of 32 characters", "", set("channel", chars(32))),
		tc("channel blank: direct", "", set("channel", "")),
		tc("channel null is not sent", "", set("channel", nil)),
		tc("channel of 33 characters", "channel: must be at most 32 characters", set("channel", chars(33))),
		tc("channel with a space", "channel: "+channelRule, set("channel", "booking com")),
		tc("channel padded", "channel: "+channelRule, set("channel", " airbnb")),
		tc("channel with a dot", "channel: "+channelRule, set("channel", "booking.com")),
		tc("channel not ASCII", "channel: "+channelRule, set("channel", "böoking")),
		tc("channel an object", "channel: must be a string", set("channel", obj(`{"a":1}`))),
		tc("both wrong, both named", "ratePlanId: must be a whole number\nchannel: "+channelRule,
			set("ratePlanId", "1.5"), set("channel", "a/b")),
	}
}

func TestDecodeRatePlanAndChannel(t *testing.T) {
	quote := `{"action":"getinfo","propertyId":12,"numberofadults":"2","checkin":"2026-07-01","checkout":"2026-07-08"}`
	t.Run("getinfo", func(t *testing.T) {
		check(t, quote, append(planRows(),
			tc("brandId", "", set("brandId", 2)),
			tc("brandId 0", "brandId: must be between 1 and 2147483647", set("brandId", 0)),
		), func(b []byte) error {
			_, err := request.DecodeQuote(b)
			return err
		})
	})
	t.Run("create", func(t *testing.T) { check(t, create, planRows(), decodeCreate) })
	t.Run("update", func(t *testing.T) { check(t, `{"action":"update","bookingId":9}`, planRows(), decodeUpdate) })

	// The values read: the channel lower case, the plan as sent; absent is 0 and "".
	q, err := request.DecodeQuote(apply(t, quote, set("ratePlanId", "3"), set("channel", "AirBnB"), set("brandId", "2")))
	if err != nil || q.RatePlanID != 3 || q.Channel != "airbnb" || q.BrandID != 2 {
		t.Fatalf("getinfo: %+v %v", q, err)
	}
	q, err = request.DecodeQuote([]byte(quote))
	if err != nil || q.RatePlanID != 0 || q.Channel != "" || q.BrandID != 0 {
		t.Fatalf("getinfo without them: %+v %v", q, err)
	}
	b, err := request.DecodeCreate(apply(t, create, set("ratePlanId", 4), set("channel", "VRBO")), now)
	if err != nil || b.RatePlanID != 4 || b.Channel != "vrbo" {
		t.Fatalf("create: %+v %v", b, err)
	}
	// On update each is recorded as sent, ratePlanId 0 and a blank channel too (they move
	// the booking to the standard plan, and to direct); absent, blank or null ratePlanId and
	// null channel are not sent.
	for _, c := range []struct {
		body             string
		planSent, chSent bool
		plan             int
		channel          string
	}{
		{`{"bookingId":9,"ratePlanId":0,"channel":""}`, true, true, 0, ""},
		{`{"bookingId":9,"ratePlanId":"5","channel":"Expedia"}`, true, true, 5, "expedia"},
		{`{"bookingId":9,"ratePlanId":"","channel":null}`, false, false, 0, ""},
		{`{"bookingId":9}`, false, false, 0, ""},
	} {
		u, err := request.DecodeUpdate([]byte(c.body), now)
		if err != nil || u.Sent.Has(request.FieldRatePlanID) != c.planSent || u.Sent.Has(request.FieldChannel) != c.chSent ||
			u.Booking.RatePlanID != c.plan || u.Booking.Channel != c.channel {
			t.Errorf("%s: %+v sent %v, %v", c.body, u.Booking, u.Sent, err)
		}
	}
}
