package aristore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/channels/ari"
	"github.com/vros/vros/libs/pricing"
)

// sentDoc is the values a channel manager accepted for a connection's property, from From
// (the first day the sender knew of, today when it wrote) on: _id
// "<account>:<connection>:<property>"; A one character a day ('1' free, '0' taken, '-' not
// known); R remote plan (hex, so that no id makes a field path) → its rate values
// (encodeRate), one a day joined by ';' ("" not known). A few fields, written whole: FerretDB
// rewrites a document per update at a cost that grows with its fields, and a field per date
// (or a document per month) made the sent values most of a full sync's time.
type sentDoc struct {
	ID   string            `bson:"_id"`
	From string            `bson:"from"`
	A    string            `bson:"a"`
	R    map[string]string `bson:"r"`
}

func sentID(account string, connection, property int64) string {
	return fmt.Sprintf("%s:%d:%d", account, connection, property)
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

// LoadSent implements ari.Sent: one read; the days before from are past.
func (s *Store) LoadSent(ctx context.Context, account string, connection, property int64, from ari.Day, days int) (ari.Values, error) {
	v := ari.Unknown(from, days)
	id := sentID(account, connection, property)
	var d sentDoc
	err := s.sent.FindOne(ctx, byID(id)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("sent values %s: %w", id, err)
	}
	start, err := pricing.ParseDate(d.From)
	if err != nil {
		return v, nil // not readable: nothing known, everything is sent again
	}
	base := pricing.DaysBetween(from, start) // the index of the document's first day
	for k := 0; k < len(d.A); k++ {
		if i := base + k; i >= 0 && i < days && d.A[k] != '-' {
			v.Avail[i] = int8(d.A[k] - '0')
		}
	}
	for hp, all := range d.R {
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
		for k, enc := range strings.Split(all, ";") {
			if i := base + k; i >= 0 && i < days && enc != "" {
				if r, ok := decodeRate(enc); ok {
					rs[i] = r
				}
			}
		}
	}
	return v, nil
}

// RecordSent implements ari.Sent: the document is written whole from v (what v does not know
// is not known; days before v.From are past and dropped), in one write. A property's sent
// values have one writer at a time, the holder of its mark's lease: no document lock is
// needed.
func (s *Store) RecordSent(ctx context.Context, account string, connection, property int64, v ari.Values) error {
	a := make([]byte, v.Days)
	for i := range v.Days {
		a[i] = '-'
		if v.Avail[i] >= 0 {
			a[i] = byte('0' + v.Avail[i])
		}
	}
	d := sentDoc{ID: sentID(account, connection, property), From: v.From.String(), A: string(a), R: map[string]string{}}
	var b strings.Builder
	for pi, plan := range v.Plans {
		b.Reset()
		for i := range v.Days {
			if i > 0 {
				b.WriteByte(';')
			}
			if v.Rates[pi][i].Rate != "" {
				b.WriteString(encodeRate(v.Rates[pi][i]))
			}
		}
		d.R[hex.EncodeToString([]byte(plan))] = b.String()
	}
	if _, err := s.sent.ReplaceOne(ctx, byID(d.ID), d, optionsUpsert()); err != nil {
		return fmt.Errorf("sent values %s: %w", d.ID, err)
	}
	return nil
}
