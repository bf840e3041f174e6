package aristore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/libs/pricing"
)

// sentDoc is the values a channel manager accepted for one month of a connection's property:
// _id "<account>:<connection>:<property>:<YYYY-MM>"; A day ("02") → availability; R remote
// plan (hex, so that no id makes a field path) → day → the rate value (encodeRate).
type sentDoc struct {
	ID string                       `bson:"_id"`
	A  map[string]int               `bson:"a"`
	R  map[string]map[string]string `bson:"r"`
}

func sentID(account string, connection, property int64, d ari.Day) string {
	return fmt.Sprintf("%s:%d:%d:%04d-%02d", account, connection, property, d.Year(), int(d.Month()))
}

func encodeRate(v ari.RateValue) string {
	b := func(x bool) string {
		if x {
			return "1"
		}
		return "0"
	}
	return strings.Join([]string{v.Rate, strconv.Itoa(v.MinStayArrival), strconv.Itoa(v.MinStayThrough),
		strconv.Itoa(v.MaxStay), b(v.ClosedToArrival), b(v.ClosedToDeparture), b(v.StopSell)}, "|")
}

func decodeRate(s string) (ari.RateValue, bool) {
	f := strings.Split(s, "|")
	if len(f) != 7 {
		return ari.RateValue{}, false
	}
	n := func(x string) int { v, _ := strconv.Atoi(x); return v }
	return ari.RateValue{Rate: f[0], MinStayArrival: n(f[1]), MinStayThrough: n(f[2]), MaxStay: n(f[3]),
		ClosedToArrival: f[4] == "1", ClosedToDeparture: f[5] == "1", StopSell: f[6] == "1"}, true
}

func dayField(d ari.Day) string { return fmt.Sprintf("%02d", d.Day()) }

// LoadSent implements ari.Sent: one read per month of the horizon.
func (s *Store) LoadSent(ctx context.Context, account string, connection, property int64, from ari.Day, days int) (ari.Values, error) {
	v := ari.Unknown(from, days)
	end := from.AddDays(days)
	for m := pricing.NewDate(from.Year(), from.Month(), 1); m.Before(end); m = m.AddMonths(1) {
		var d sentDoc
		err := s.sent.FindOne(ctx, byID(sentID(account, connection, property, m))).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return v, fmt.Errorf("sent values: %w", err)
		}
		at := func(day string) int {
			n, err := strconv.Atoi(day)
			if err != nil || n < 1 || n > 31 {
				return -1
			}
			i := pricing.DaysBetween(from, m.AddDays(n-1))
			if i < 0 || i >= days || m.AddDays(n-1).Month() != m.Month() {
				return -1
			}
			return i
		}
		for day, a := range d.A {
			if i := at(day); i >= 0 {
				v.Avail[i] = int8(a)
			}
		}
		for hp, byDay := range d.R {
			raw, err := hex.DecodeString(hp)
			if err != nil {
				continue
			}
			plan := string(raw)
			rs := v.RatesOf(plan)
			if rs == nil {
				rs = make([]ari.RateValue, days)
				v.Plans = append(v.Plans, plan)
				v.Rates = append(v.Rates, rs)
			}
			for day, enc := range byDay {
				if i := at(day); i >= 0 {
					if r, ok := decodeRate(enc); ok {
						rs[i] = r
					}
				}
			}
		}
	}
	return v, nil
}

// RecordSent implements ari.Sent: one update per month touched, setting the days accepted (none
// before today); the documents of the two months before today's are deleted (a month's
// documents are past then, and Load reads from today on).
func (s *Store) RecordSent(ctx context.Context, account string, connection, property int64, today ari.Day,
	avail []channel.Availability, rates []channel.Rate) error {
	sets := map[string]bson.D{}
	add := func(d ari.Day, field string, value any) {
		if d.Before(today) {
			return
		}
		id := sentID(account, connection, property, d)
		sets[id] = append(sets[id], bson.E{Key: field, Value: value})
	}
	each := func(from, to string, f func(d ari.Day)) error {
		a, err1 := pricing.ParseDate(from)
		b, err2 := pricing.ParseDate(to)
		if err1 != nil || err2 != nil || b.Before(a) || pricing.DaysBetween(a, b) > channel.MaxDays {
			return fmt.Errorf("sent range %s..%s cannot be read", from, to)
		}
		for d := a; !d.After(b); d = d.AddDays(1) {
			f(d)
		}
		return nil
	}
	for _, a := range avail {
		if err := each(a.From, a.To, func(d ari.Day) { add(d, "a."+dayField(d), a.Available) }); err != nil {
			return err
		}
	}
	for _, r := range rates {
		enc := encodeRate(ari.RateValueOf(r))
		plan := hex.EncodeToString([]byte(r.RemoteRatePlanID))
		if err := each(r.From, r.To, func(d ari.Day) { add(d, "r."+plan+"."+dayField(d), enc) }); err != nil {
			return err
		}
	}
	for id, set := range sets {
		if err := s.updateSent(ctx, id, bson.D{{Key: "$set", Value: set}}); err != nil {
			return err
		}
	}
	first := pricing.NewDate(today.Year(), today.Month(), 1)
	for _, back := range []int{-1, -2} {
		if _, err := s.sent.DeleteOne(ctx, byID(sentID(account, connection, property, first.AddMonths(back)))); err != nil {
			return fmt.Errorf("sent values: %w", err)
		}
	}
	return nil
}

func (s *Store) updateSent(ctx context.Context, id string, upd bson.D) error {
	defer s.locks.Lock(SentCollection + "|" + id)()
	if _, err := s.sent.UpdateOne(ctx, byID(id), upd, optionsUpsertUpdate()); err != nil {
		return fmt.Errorf("sent values %s: %w", id, err)
	}
	return nil
}
